#include "backends/redlock/redlock_backend.h"

#include <stdexcept>

namespace fencecheck {
namespace {

std::vector<std::string> master_nodes(std::size_t n) {
  std::vector<std::string> nodes;
  for (std::size_t i = 1; i <= n; ++i) nodes.push_back("n" + std::to_string(i));
  return nodes;
}

std::vector<BackendOption> redlock_option_specs() {
  std::vector<BackendOption> specs = {
      {"n", "how many independent redis masters", "5", {"3", "5"}},
      {"validity_check",
       "off returns the lock without checking that validity is still positive after the replies "
       "(node-redlock 5 beta; Kleppmann's K4)",
       "on",
       {"on", "off"}},
      {"instance_timeout_ms", "how long one master may take to answer (auto: max(50, ttl/200))", "auto", {}},
      {"stall_after_send_ms", "sleep this long after the SETs are written, before reading replies", "0", {}},
      {"stall_every", "stall only on every k-th acquire of a client", "1", {}},
  };
  for (BackendOption& o : redis_server_option_specs()) specs.push_back(std::move(o));
  return specs;
}

}  // namespace

RedlockServer::RedlockServer(RedisServerOptions redis, std::size_t n, RedlockClientConfig client)
    : RedisServer(redis, master_nodes(n)), client_(std::move(client)) {}

nlohmann::json RedlockServer::client_config() const {
  std::vector<HostPort> masters;
  for (const std::string& node : nodes()) masters.push_back({endpoint(node).address, endpoint(node).port});
  return client_config_at(masters);
}

nlohmann::json RedlockServer::client_config_at(const std::vector<HostPort>& servers) const {
  if (servers.size() != nodes().size()) {
    throw std::invalid_argument("backend redlock with n=" + std::to_string(nodes().size()) + " takes " +
                                std::to_string(nodes().size()) + " masters, not " + std::to_string(servers.size()) +
                                " (--backend-opt n=3 or 5)");
  }
  RedlockClientConfig c = client_;
  c.instances.clear();
  for (const HostPort& s : servers) c.instances.push_back({s.address, s.port});
  return c.to_json();
}

BackendInfo redlock_backend_info() {
  BackendInfo info;
  info.name = "redlock";
  info.description =
      "Redlock over 3 or 5 independent redis-server masters (SET NX PX on all, quorum, validity); no "
      "fencing token";
  info.server_nodes = master_nodes(5);
  info.promise = "a lock is the holder's while its validity (the ttl less the time the acquire took and the clock drift) lasts, on a majority of masters";
  info.binaries = {{"redis-server", "redis-server"}};
  info.options = redlock_option_specs();
  info.offers = {Capability::kServerClocksReachable};
  info.reasons = {{Capability::kKillsSessions, "a lock is a key with an expiry on each master, not bound to a connection"}};
  info.make_server = [](const BackendOptions& options) -> std::unique_ptr<LockServer> {
    RedisServerOptions redis = RedisServerOptions::from_options({{"persistence", options.at("persistence")}});
    const std::string& n = options.at("n");
    if (n != "3" && n != "5") throw std::invalid_argument("redlock option n must be 3 or 5, got \"" + n + "\"");
    return std::make_unique<RedlockServer>(redis, n == "3" ? 3 : 5, RedlockClientConfig::from_options(options));
  };
  info.make_client = [](const nlohmann::json& config, const std::string&) -> std::unique_ptr<LockClient> {
    return std::make_unique<RedlockClient>(RedlockClientConfig::from_json(config));
  };
  info.endpoints = [](const nlohmann::json& config) {
    std::vector<std::string> masters;
    for (const RedisEndpoint& e : RedlockClientConfig::from_json(config).instances) {
      masters.push_back(e.to_string());
    }
    return masters;
  };
  return info;
}

}  // namespace fencecheck
