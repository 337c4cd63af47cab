#include "backends/memcached/memcached_backend.h"

#include "backends/memcached/memcached_lock_client.h"
#include "backends/memcached/memcached_server.h"

namespace fencecheck {

BackendInfo memcached_backend_info() {
  BackendInfo info;
  info.name = "memcached";
  info.description = "one memcached; meta set in add mode with a TTL, compare-and-delete by CAS; no fencing token";
  info.server_nodes = {"n1"};
  info.promise =
      "the item is the holder's until its TTL runs out (whole seconds, on a clock that ticks once a second) — unless "
      "memory runs short and the LRU evicts it, or the server restarts empty";
  info.binaries = {{"memcached", "memcached"}};
  info.options = memcached_option_specs();
  // press_memory: filler stores that make memcached evict (memory-pressure), unless -M.
  info.offers = {Capability::kEvictsKeys};
  info.withheld = [](const BackendOptions& options) -> std::vector<CapabilityReason> {
    auto evict = options.find("evict");
    if (evict == options.end() || evict->second != "off") return {};
    return {{Capability::kEvictsKeys,
             "evict=off is -M: memcached refuses to evict; the fault would only fill the cache"}};
  };
  info.reasons = {
      {Capability::kKillsSessions, "a lock is an item with a TTL, not bound to a connection"},
      {Capability::kServerClocksReachable,
       "memcached counts expiry on its own once-a-second timer of the monotonic clock, which the clock library "
       "does not shift"},
  };
  info.make_server = [](const BackendOptions& options) -> std::unique_ptr<LockServer> {
    return std::make_unique<MemcachedServer>(MemcachedServerOptions::from_options(options));
  };
  info.make_client = [](const nlohmann::json& config, const std::string& client_name) -> std::unique_ptr<LockClient> {
    return std::make_unique<MemcachedLockClient>(MemcachedClientConfig::from_json(config), client_name);
  };
  info.endpoints = [](const nlohmann::json& config) -> std::vector<std::string> {
    MemcachedClientConfig c = MemcachedClientConfig::from_json(config);
    return {c.host + ":" + std::to_string(c.port)};
  };
  return info;
}

}  // namespace fencecheck
