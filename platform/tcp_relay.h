// TcpRelay: carries TCP from the run's nodes to one server outside the run's network (the
// external runtime's servers, which the user runs). It accepts on a listening socket made
// inside the run's hub namespace (listen_in_namespace) and, for each connection, dials the
// server from the controller's own namespace and copies bytes both ways; an end's FIN is
// passed on as a FIN, a reset or error closes both ends. A node cut from the relay's
// address by the run's iptables rules is cut from the server; the server, which keeps its
// side open, sees a client that went silent, as it would behind a real partition.
//
// Threads: one accepting thread, one per connection; all joined by stop(), which takes
// about 100 ms (every thread polls in 100 ms steps), up to 3 s while a dial is under way.
// Thread-safe. A server that does not answer within 3 s of dialling gets the node's
// connection closed; nothing else blocks.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <thread>

#include "platform/unique_fd.h"

namespace fencecheck {

// A TCP socket listening on address:port (IPv4) inside the network namespace at
// netns_path, made by a short-lived thread that entered it. Throws HarnessError naming the
// namespace or address when it cannot be made.
UniqueFd listen_in_namespace(const std::string& netns_path, const std::string& address, std::uint16_t port);

class TcpRelay {
 public:
  // Starts accepting at once. target_address is an IPv4 address.
  TcpRelay(UniqueFd listener, std::string target_address, std::uint16_t target_port);
  ~TcpRelay() { stop(); }
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  // Closes the listener and every connection; joins all threads. Idempotent.
  void stop() noexcept;
  // Connections accepted so far (for tests and the run's notes).
  int accepted() const { return accepted_.load(); }

 private:
  void accept_loop();
  void carry(UniqueFd node_side);

  UniqueFd listener_;
  std::string target_address_;
  std::uint16_t target_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::mutex mu_;                      // threads_
  std::list<std::thread> threads_;     // one per connection
  std::thread acceptor_;
};

}  // namespace fencecheck
