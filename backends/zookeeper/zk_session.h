// ZkSession: one ZooKeeper session at a time over libzookeeper-mt, for the lock client.
//
// The session's state is what its watcher last reported: kConnecting after a connection
// loss (the session may live on: its ephemeral nodes stay until the ensemble expires it),
// kConnected, or kExpired (the ensemble ended it and deleted its ephemerals; the handle is
// dead). connect() replaces an expired session with a new one, whose generation() is one
// higher, so that callers can tell that grants of the old one are gone.
//
// Requests are asynchronous calls awaited until a deadline, so that no call blocks longer
// than its caller allows (the C client's synchronous calls wait until it gives up on the
// connection, 2/3 of the session timeout). A Reply says whether the request was not sent
// (refused by the client library), answered (rc is the server's or the library's code,
// ZCONNECTIONLOSS included), or unanswered by the deadline.
//
// Orphans: nodes of this session that must go although nobody holds them (an acquire gave
// up and could not confirm its delete; a create whose answer came too late). sweep()
// deletes them once connected; an expired session takes them with it.
//
// Not thread-safe: one caller at a time (the lock client). The library's threads call
// back into a shared state only; the destructor closes the handle, which may block for a
// few seconds while it tells a reachable server that the session ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <zookeeper/zookeeper.h>

namespace fencecheck {

class ZkSession {
 public:
  using Clock = std::chrono::steady_clock;
  enum class State { kConnecting, kConnected, kExpired };

  struct Reply {
    enum class Status { kNotSent, kAnswered, kNoReply };
    Status status = Status::kNotSent;
    int rc = ZOK;                       // kAnswered and kNotSent: a ZOO_ERRORS code
    std::string path;                   // create: the node created
    Stat stat{};                        // create, exists
    std::vector<std::string> children;  // children
    bool answered_ok() const { return status == Status::kAnswered && rc == ZOK; }
  };

  // hosts: "host:port,host:port,…"; session_timeout: what the session asks the ensemble
  // for. Starts connecting at once.
  ZkSession(std::string hosts, std::chrono::milliseconds session_timeout);
  ~ZkSession();
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  // Replaces an expired (or never created) session, then waits until the state is no longer
  // kConnecting or the deadline passes; returns the state then.
  State connect(Clock::time_point deadline);
  // Waits until the state is no longer kConnecting or the deadline passes, without
  // replacing an expired session: how a caller learns what a connection loss became.
  State settle(Clock::time_point deadline);
  State state() const;
  std::uint64_t generation() const { return generation_; }

  Reply create(const std::string& path, const std::string& data, int mode,
               Clock::time_point deadline);
  Reply children(const std::string& path, Clock::time_point deadline);
  Reply exists(const std::string& path, Clock::time_point deadline);
  // getData with a watch: sets a watch only when the node exists (ZOK), unlike exists,
  // which would leave one behind on a missing node.
  Reply watch(const std::string& path, Clock::time_point deadline);
  Reply remove(const std::string& path, Clock::time_point deadline);

  // Counts watch events and state changes; wait_event() returns once it exceeds `seen`
  // or the deadline passes.
  std::uint64_t events() const;
  void wait_event(std::uint64_t seen, Clock::time_point deadline);

  void add_orphan(const std::string& path);
  // Deletes the orphans of the current session, if connected, each within the deadline.
  void sweep(Clock::time_point deadline);

  struct Shared;  // what the library's threads see; public for the C callbacks

 private:
  template <class Issue>
  Reply run(Issue issue, Clock::time_point deadline, bool create);
  void renew();

  std::string hosts_;
  std::chrono::milliseconds session_timeout_;
  std::shared_ptr<Shared> shared_;
  zhandle_t* zh_ = nullptr;
  std::uint64_t generation_ = 0;
};

// "ZCONNECTIONLOSS (connection loss)" for messages.
std::string zk_error_name(int rc);

}  // namespace fencecheck
