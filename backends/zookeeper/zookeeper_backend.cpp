#include "backends/zookeeper/zookeeper_backend.h"

#include <algorithm>

#include "backends/zookeeper/zookeeper_lock_client.h"
#include "backends/zookeeper/zookeeper_server.h"

namespace fencecheck {

BackendInfo zookeeper_backend_info() {
  BackendInfo info;
  info.name = "zookeeper";
  info.description =
      "3-node ZooKeeper ensemble; the lock recipe (ephemeral-sequential nodes), the lock "
      "node's czxid as fencing token, the session as lease";
  info.server_nodes = {"n1", "n2", "n3"};
  info.promise = "the lock node is the holder's until its session expires; its czxid fences";
  info.lease_ms = [](const BackendOptions& o, std::int64_t) {
    return option_number(o, "zookeeper", "session_timeout_ms", 1, 1200000);
  };
  // The servers run as `java … QuorumPeerMain` from Debian's jars; zkServer.sh is only
  // looked up because it shows that the zookeeper package (and its jars) is installed.
  info.binaries = {{"java", "default-jre-headless"},
                   {"zkServer.sh", "zookeeper", {"/usr/share/zookeeper/bin"}}};
  info.options = zookeeper_option_specs();
  info.offers = {Capability::kNamesLeader, Capability::kServerClocksReachable};
  info.reasons = {{Capability::kKillsSessions,
                   "ZooKeeper ends a session on demand only through JMX's terminateSession, which fencecheck does "
                   "not drive"}};
  info.make_server = [](const BackendOptions& options) -> std::unique_ptr<LockServer> {
    return std::make_unique<ZooKeeperServer>(ZooKeeperServerOptions::from_options(options));
  };
  info.make_client = [](const nlohmann::json& config,
                        const std::string& client_name) -> std::unique_ptr<LockClient> {
    return std::make_unique<ZooKeeperLockClient>(ZooKeeperClientConfig::from_json(config), client_name);
  };
  info.endpoints = [](const nlohmann::json& config) {
    std::vector<std::string> members;
    std::string hosts = ZooKeeperClientConfig::from_json(config).hosts;
    for (std::size_t start = 0, comma; start < hosts.size(); start = comma + 1) {
      comma = std::min(hosts.find(',', start), hosts.size());
      members.push_back(hosts.substr(start, comma - start));
    }
    return members;
  };
  return info;
}

}  // namespace fencecheck
