#include "backends/redis/redis_backend.h"

#include "backends/redis/redis_lock_client.h"
#include "backends/redis/redis_server.h"

namespace fencecheck {

BackendInfo redis_backend_info() {
  BackendInfo info;
  info.name = "redis";
  info.description =
      "one redis-server; SET NX PX lease plus an INCR fencing counter, in one Lua script";
  info.server_nodes = {"n1"};
  info.promise = "the key is the holder's until its PX ttl runs out; each grant's INCR token is larger than the last";
  info.binaries = {{"redis-server", "redis-server"}};
  info.options = redis_server_option_specs();
  info.offers = {Capability::kServerClocksReachable};
  info.reasons = {{Capability::kKillsSessions, "a lock is a key with an expiry, not bound to a connection"}};
  info.make_server = [](const BackendOptions& options) -> std::unique_ptr<LockServer> {
    return std::make_unique<RedisServer>(RedisServerOptions::from_options(options));
  };
  info.make_client = [](const nlohmann::json& config,
                        const std::string& client_name) -> std::unique_ptr<LockClient> {
    return std::make_unique<RedisLockClient>(RedisClientConfig::from_json(config), client_name);
  };
  info.endpoints = [](const nlohmann::json& config) -> std::vector<std::string> {
    RedisClientConfig c = RedisClientConfig::from_json(config);
    return {c.host + ":" + std::to_string(c.port)};
  };
  return info;
}

}  // namespace fencecheck
