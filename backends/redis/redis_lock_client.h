// The lock client of the `redis` backend: a single Redis server holds each lock as a key
// with a TTL, and a per-key counter gives fencing tokens.
//
// acquire is one Lua script, so it is atomic on the server: SET key owner NX PX ttl and,
// only when that succeeded, INCR "fence:"+key, whose new value is the token. release is a
// Lua compare-and-delete: the key is deleted only if it still holds this grant's owner.
// Outcomes follow LockClient's rule: a timeout or a lost connection is kUnknown; a
// refusal, an error reply or a failed connect is kFail. A grant promises its lease: valid_ms
// = ttl, counted from the acquire's start. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/lock_client.h"
#include "backends/redis/redis_connection.h"

namespace fencecheck {

// The acquire, one Lua script: SET NX PX, then INCR of the fence key. KEYS[1] the lock,
// KEYS[2] its fence counter; ARGV[1] the owner, ARGV[2] the lease in ms. (bench/harness
// sends the same script through redis-benchmark.)
extern const char* const kRedisAcquireScript;

// Redis keeps a key's expiry in whole ms of its clock: a PX of ttl lasts at least ttl less
// this from the SET. A promise counted from a PX subtracts it (the redlock client's drift
// allowance already covers it).
inline constexpr std::chrono::milliseconds kRedisExpiryResolution{1};

struct RedisClientConfig {
  std::string host;
  int port = 6379;
  std::chrono::milliseconds connect_timeout{500};
  std::chrono::milliseconds command_timeout{1000};

  // {"host": "10.0.0.1", "port": 6379, "connect_timeout_ms": 500, "command_timeout_ms":
  // 1000}; the timeouts are optional. Throws std::invalid_argument naming a bad field.
  static RedisClientConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
};

class RedisLockClient : public LockClient {
 public:
  // client_name makes owners unique across workers; it is the worker's node name.
  RedisLockClient(const RedisClientConfig& config, std::string client_name);

  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;

  // The key holding key's fencing counter.
  static std::string fence_key(const std::string& key);

 private:
  RedisConnection conn_;
  GrantOwners owners_;
};

}  // namespace fencecheck
