// A hiredis connection with connect and command timeouts, shared by the Redis-based
// backends (the lock client, the server readiness probe).
//
// RedisConnection is not thread-safe. It connects lazily and drops the connection after
// any I/O error or timeout (hiredis contexts are unusable after one), so the next command
// reconnects. command() tells apart "nothing was sent" (connect failed) from "sent, but no
// reply" (timeout or connection lost), which is the kFail / kUnknown rule of LockClient.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <hiredis/hiredis.h>

namespace fencecheck {

// The release of every redis lock (RDOC's script): KEYS[1] the lock, ARGV[1] the owner's
// value; deletes the key only while it still holds that value. Returns 1 or 0.
inline constexpr const char* kCompareAndDeleteScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
)lua";

struct RedisReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyDeleter>;

struct RedisCommandResult {
  enum class Status { kReply, kNotSent, kLost };
  Status status = Status::kNotSent;
  RedisReplyPtr reply;  // kReply only; may be an error reply (REDIS_REPLY_ERROR)
  std::string error;    // kNotSent / kLost: what went wrong
};

class RedisConnection {
 public:
  RedisConnection(std::string host, int port, std::chrono::milliseconds connect_timeout,
                  std::chrono::milliseconds command_timeout);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends one command given as binary-safe arguments and waits for its reply.
  RedisCommandResult command(const std::vector<std::string>& args);

  std::string endpoint() const;  // "host:port" for messages

 private:
  bool ensure_connected(std::string& error);
  void drop();

  std::string host_;
  int port_;
  std::chrono::milliseconds connect_timeout_;
  std::chrono::milliseconds command_timeout_;
  redisContext* ctx_ = nullptr;
};

// True if a Redis server at host:port answers PING with PONG within timeout.
bool redis_ping(const std::string& host, int port, std::chrono::milliseconds timeout);

}  // namespace fencecheck
