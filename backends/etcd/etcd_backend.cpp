#include "backends/etcd/etcd_backend.h"

#include "backends/etcd/etcd_lock_client.h"
#include "backends/etcd/etcd_server.h"

namespace fencecheck {

BackendInfo etcd_backend_info() {
  BackendInfo info;
  info.name = "etcd";
  info.description =
      "3-member etcd 3.4 cluster; a lease per grant, locked by the v3lock Lock RPC or the "
      "concurrency Mutex recipe (lock=), the lock key's create revision as fencing token";
  info.server_nodes = {"n1", "n2", "n3"};
  info.promise = "the lock is the holder's while its lease (lease_ttl_s, 2 s by default) is kept alive in the background; the key's create revision fences";
  info.lease_ms = [](const BackendOptions& o, std::int64_t) {  // --ttl-ms bounds only the wait
    return 1000 * option_number(o, "etcd", "lease_ttl_s", 2, 3600);
  };
  info.binaries = {{"etcd", "etcd-server"}};
  info.options = etcd_option_specs();
  // The keep-alive renews a held grant's lease: each renewal is a renewed notice.
  info.offers = {Capability::kNamesLeader, Capability::kClientRenews};
  info.reasons = {{Capability::kServerClocksReachable,
                   "etcd is a static Go binary that reads the time through the vDSO, where libfcclock's LD_PRELOAD "
                   "cannot reach"},
                  {Capability::kKillsSessions,
                   "a lock hangs on a lease, and nothing on the server says which client a lease is for"}};
  info.make_server = [](const BackendOptions& options) -> std::unique_ptr<LockServer> {
    return std::make_unique<EtcdServer>(options);
  };
  info.make_client = [](const nlohmann::json& config, const std::string&) -> std::unique_ptr<LockClient> {
    return std::make_unique<EtcdLockClient>(EtcdClientConfig::from_json(config));
  };
  info.endpoints = [](const nlohmann::json& config) { return EtcdClientConfig::from_json(config).endpoints; };
  return info;
}

}  // namespace fencecheck
