#include "backends/redis/redis_lock_client.h"

#include <cstdio>
#include <stdexcept>

#include "backends/registry.h"

namespace fencecheck {

const char* const kRedisAcquireScript = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false
)lua";

namespace {

using lock_result::fail;
using lock_result::unknown;

// Maps a command that produced no usable reply to an outcome; nullopt when it has a reply
// that is not an error, for the caller to interpret.
std::optional<LockResult> transport_outcome(const RedisCommandResult& r) {
  switch (r.status) {
    case RedisCommandResult::Status::kNotSent:
      return LockResult{Outcome::kFail, std::nullopt, r.error, /*not_sent=*/true};
    case RedisCommandResult::Status::kLost:
      return unknown(r.error);
    case RedisCommandResult::Status::kReply:
      break;
  }
  if (r.reply->type == REDIS_REPLY_ERROR) {
    return fail("redis error: " + std::string(r.reply->str, r.reply->len));
  }
  return std::nullopt;
}

std::chrono::milliseconds positive_ms(const nlohmann::json& j, const char* field,
                                      std::chrono::milliseconds fallback) {
  return std::chrono::milliseconds(config_number(j, "redis client config", field, 1, 3600000, fallback.count()));
}

}  // namespace

RedisClientConfig RedisClientConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    throw std::invalid_argument("redis client config must be a JSON object, got " + j.dump());
  }
  RedisClientConfig c;
  if (!j.contains("host") || !j.at("host").is_string() ||
      j.at("host").get<std::string>().empty()) {
    throw std::invalid_argument("redis client config: \"host\" must be a non-empty string");
  }
  c.host = j.at("host").get<std::string>();
  if (!j.contains("port") || !j.at("port").is_number_integer() ||
      j.at("port").get<std::int64_t>() <= 0 || j.at("port").get<std::int64_t>() > 65535) {
    throw std::invalid_argument("redis client config: \"port\" must be an integer in 1..65535");
  }
  c.port = j.at("port").get<int>();
  c.connect_timeout = positive_ms(j, "connect_timeout_ms", c.connect_timeout);
  c.command_timeout = positive_ms(j, "command_timeout_ms", c.command_timeout);
  return c;
}

nlohmann::json RedisClientConfig::to_json() const {
  return {{"host", host},
          {"port", port},
          {"connect_timeout_ms", connect_timeout.count()},
          {"command_timeout_ms", command_timeout.count()}};
}

RedisLockClient::RedisLockClient(const RedisClientConfig& config, std::string client_name)
    : conn_(config.host, config.port, config.connect_timeout, config.command_timeout),
      owners_(std::move(client_name)) {}

std::string RedisLockClient::fence_key(const std::string& key) { return "fence:" + key; }

LockResult RedisLockClient::acquire(const std::string& key, std::chrono::milliseconds ttl) {
  if (ttl.count() <= 0) return fail("ttl must be positive, got " + std::to_string(ttl.count()));
  std::string owner = owners_.next();
  RedisCommandResult r = conn_.command({"EVAL", kRedisAcquireScript, "2", key, fence_key(key), owner,
                                        std::to_string(ttl.count())});
  if (auto outcome = transport_outcome(r)) return *outcome;
  if (r.reply->type == REDIS_REPLY_NIL) return fail("lock held by another client");
  if (r.reply->type != REDIS_REPLY_INTEGER) {
    // The script ran and may have taken the lock; we cannot tell the token.
    return unknown("unexpected reply type " + std::to_string(r.reply->type) + " to acquire");
  }
  // The lease PX gave, on the server's clock from when it ran the script: after the
  // client sent it, so ttl from the acquire's start never promises more than the server —
  // less 1 ms: Redis keeps an expiry in whole ms of its clock (the key goes at
  // floor(now_ms) + ttl), so a key may go up to 1 ms before ttl has passed since the SET
  // (a budget run, 2026-12-04: a next grant 0.7 ms before ttl from the acquire's start).
  Grant g{key, r.reply->integer, std::move(owner)};
  g.promise = Promise::lasting(ttl - kRedisExpiryResolution);
  return {Outcome::kOk, std::move(g), "", false};
}

LockResult RedisLockClient::release(const Grant& g) {
  RedisCommandResult r = conn_.command({"EVAL", kCompareAndDeleteScript, "1", g.key, g.owner});
  if (auto outcome = transport_outcome(r)) return *outcome;
  if (r.reply->type == REDIS_REPLY_INTEGER && r.reply->integer == 1) {
    return {Outcome::kOk, std::nullopt, "", false};
  }
  if (r.reply->type == REDIS_REPLY_INTEGER && r.reply->integer == 0) return fail("not held");
  return unknown("unexpected reply type " + std::to_string(r.reply->type) + " to release");
}

}  // namespace fencecheck
