#include "backends/nats/nats_backend.h"

#include "backends/nats/nats_lock_client.h"
#include "backends/nats/nats_server.h"

namespace fencecheck {

BackendInfo nats_backend_info() {
  BackendInfo info;
  info.name = "nats";
  info.description =
      "NATS JetStream 2.9 key-value bucket, 3-node cluster (or servers=1); create-if-absent with the bucket's max "
      "age as lease, delete at the grant's revision, the KV revision as fencing token";
  info.server_nodes = {"n1", "n2", "n3"};
  info.promise =
      "the key is the holder's until the bucket's max age (max_age_ms) runs out; its revision, the stream sequence, "
      "fences";
  info.lease_ms = [](const BackendOptions& o, std::int64_t) {  // --ttl-ms does not change the bucket's max age
    return option_number(o, "nats", "max_age_ms", 100, 86400000);
  };
  info.binaries = {{"nats-server", "nats-server"}};
  info.options = nats_option_specs();
  info.offers = {Capability::kNamesLeader};
  info.reasons = {{Capability::kServerClocksReachable,
                   "nats-server is a static Go binary that reads the time through the vDSO, where libfcclock's "
                   "LD_PRELOAD cannot reach"},
                  {Capability::kKillsSessions, "a lock is a key with the bucket's max age, not bound to a connection"}};
  info.make_server = [](const BackendOptions& options) -> std::unique_ptr<LockServer> {
    return std::make_unique<NatsServer>(NatsServerOptions::from_options(options));
  };
  info.make_client = [](const nlohmann::json& config, const std::string& client_name) -> std::unique_ptr<LockClient> {
    return std::make_unique<NatsLockClient>(NatsClientConfig::from_json(config), client_name);
  };
  info.endpoints = [](const nlohmann::json& config) { return NatsClientConfig::from_json(config).servers; };
  return info;
}

}  // namespace fencecheck
