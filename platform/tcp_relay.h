// TcpRelay: carries TCP from the run's nodes to one server outside the run's network (the
// external runtime's servers, which the user runs). It accepts on a listening socket made
// inside the run's hub namespace (listen_in_namespace) and, for each connection, dials the
// server from the controller's own namespace and copies bytes both ways; an end's FIN is
// passed on as a FIN, a reset or error closes both ends. A node cut from the relay's
// address by the run's iptables rules is cut from the server; the server, which keeps its
// side open, sees a client that went silent, as it would behind a real partition.
//
// Threads: one accepting thread, one per open connection; a finished connection's thread is
// joined by the acceptor within its 100 ms poll step, so live threads follow the open
// connections, not all that were ever made. stop() joins the rest: about 100 ms (every
// thread polls in 100 ms steps), up to 3 s while a dial is under way. Thread-safe. A server
// that does not answer within 3 s of dialling gets the node's connection closed; nothing
// else blocks.
//
// A failing accept (no descriptor or memory left: EMFILE, ENFILE, ENOBUFS, ENOMEM) leaves the
// node's connection queued and is retried after a back-off growing from 10 ms to 1 s, never
// at once; each spell of failures is written to stderr once (a warning) and accept_error()
// says the last error until an accept succeeds again.
#pragma once

#include <atomic>
#include <chrono>
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
  // Connection threads not yet joined: the open connections, plus those that finished in
  // the last poll step.
  int connection_threads() const;
  // Why the last accept failed ("accept on the relay to ADDR:PORT: Too many open files"),
  // empty once one succeeds again (and before any failed).
  std::string accept_error() const;

 private:
  struct Connection {
    std::thread thread;
    std::atomic<bool> done{false};  // carry() returned; join will not wait
  };

  void accept_loop();
  // After a failed accept with errno err: sleeps the next back-off step (delay, doubled
  // each time) unless err concerns one connection only (ECONNABORTED, ...).
  void back_off_after(int err, std::chrono::milliseconds& delay);
  void start_connection(UniqueFd node_side);
  void reap_finished();
  void carry(UniqueFd node_side);

  UniqueFd listener_;
  std::string target_address_;
  std::uint16_t target_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  mutable std::mutex mu_;              // connections_, accept_error_
  std::list<Connection> connections_;  // one per connection not yet joined
  std::string accept_error_;
  std::thread acceptor_;
};

}  // namespace fencecheck
