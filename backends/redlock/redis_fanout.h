// RedisFanout: one command sent to N independent Redis servers at once, every reply (or
// its absence) gathered by one deadline. Redlock's "try all instances, ideally at the same
// time" on a single thread: non-blocking sockets and poll(), hiredis only formats the
// command and parses the replies.
//
// A call runs in two phases: connect (where needed) and write the command to every
// server, then read the replies. An optional hook runs between them, once every write has
// been made, before any reply is read: the lock client's stand-in for a GC pause while
// replies are in flight (they wait in the kernel's buffers). After the deadline only
// replies already received are read, so a hook that outlasts the deadline still sees them.
//
// Per server the result tells apart "nothing was sent" (connect failed, the deadline
// passed first, or the write failed before any byte left) from "sent, no reply" (timeout
// or connection lost), as LockClient's outcome rule needs. A connection whose reply did
// not come in time is kept, so the next call's command queues behind the unanswered one
// on the same TCP stream: a reply to it then proves the server processed the earlier
// command first (redis runs one connection's commands in order). drop_unanswered() closes
// such connections with a reset, so nothing still queued in this process can arrive later.
//
// Not thread-safe. Connections persist between calls and reconnect as needed.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/redis/redis_connection.h"

namespace fencecheck {

struct RedisEndpoint {
  std::string host;  // IPv4 dotted quad
  int port = 6379;
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

class RedisFanout {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RedisFanout(std::vector<RedisEndpoint> endpoints);
  ~RedisFanout();
  RedisFanout(const RedisFanout&) = delete;
  RedisFanout& operator=(const RedisFanout&) = delete;

  std::size_t size() const { return conns_.size(); }
  const RedisEndpoint& endpoint(std::size_t i) const;

  // Sends args to every server and returns one result per server, in endpoint order.
  // after_send (optional) runs once every write has been made or has failed.
  std::vector<RedisCommandResult> send_all(const std::vector<std::string>& args,
                                           Clock::time_point deadline,
                                           const std::function<void()>& after_send = {});

  // Closes, with a TCP reset, every connection still owing a reply.
  void drop_unanswered();

 private:
  struct Conn;
  void write_phase(Clock::time_point deadline);
  void read_phase(Clock::time_point deadline);
  // Polls the connections still writing (or reading) and lets them progress, until none
  // is left (true) or the deadline passes (false).
  bool poll_while(bool writing, Clock::time_point deadline);

  std::vector<std::unique_ptr<Conn>> conns_;
};

}  // namespace fencecheck
