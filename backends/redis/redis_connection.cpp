#include "backends/redis/redis_connection.h"

#include <sys/time.h>

#include <cerrno>

namespace fencecheck {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

RedisConnection::RedisConnection(std::string host, int port,
                                 std::chrono::milliseconds connect_timeout,
                                 std::chrono::milliseconds command_timeout)
    : host_(std::move(host)),
      port_(port),
      connect_timeout_(connect_timeout),
      command_timeout_(command_timeout) {}

RedisConnection::~RedisConnection() { drop(); }

std::string RedisConnection::endpoint() const { return host_ + ":" + std::to_string(port_); }

void RedisConnection::drop() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

bool RedisConnection::ensure_connected(std::string& error) {
  if (ctx_ != nullptr) return true;
  redisContext* ctx = redisConnectWithTimeout(host_.c_str(), port_, to_timeval(connect_timeout_));
  if (ctx == nullptr) {
    error = "cannot connect to redis at " + endpoint() + ": out of memory";
    return false;
  }
  if (ctx->err != 0 || redisSetTimeout(ctx, to_timeval(command_timeout_)) != REDIS_OK) {
    error = "cannot connect to redis at " + endpoint() + ": " + ctx->errstr;
    redisFree(ctx);
    return false;
  }
  ctx_ = ctx;
  return true;
}

RedisCommandResult RedisConnection::command(const std::vector<std::string>& args) {
  RedisCommandResult result;
  if (!ensure_connected(result.error)) {
    result.status = RedisCommandResult::Status::kNotSent;
    return result;
  }
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  void* raw = redisCommandArgv(ctx_, static_cast<int>(args.size()), argv.data(), lens.data());
  if (raw == nullptr) {
    // The command may have reached the server: its effect is unknown.
    bool timed_out = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    result.status = RedisCommandResult::Status::kLost;
    result.error = timed_out ? "timeout waiting for redis at " + endpoint()
                             : "connection to redis at " + endpoint() + " lost: " + ctx_->errstr;
    drop();
    return result;
  }
  result.status = RedisCommandResult::Status::kReply;
  result.reply.reset(static_cast<redisReply*>(raw));
  return result;
}

bool redis_ping(const std::string& host, int port, std::chrono::milliseconds timeout) {
  RedisConnection conn(host, port, timeout, timeout);
  RedisCommandResult r = conn.command({"PING"});
  return r.status == RedisCommandResult::Status::kReply &&
         r.reply->type == REDIS_REPLY_STATUS && std::string(r.reply->str) == "PONG";
}

}  // namespace fencecheck
