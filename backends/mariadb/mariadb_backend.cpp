#include "backends/mariadb/mariadb_backend.h"

#include "backends/mariadb/mariadb_lock_client.h"
#include "backends/mariadb/mariadb_server.h"

namespace fencecheck {

const GaleraProvider& galera_provider() {
  static const GaleraProvider provider{"/usr/lib/galera/libgalera_smm.so", "galera-4"};
  return provider;
}

BackendInfo mariadb_backend_info() {
  BackendInfo info;
  info.name = "mariadb";
  info.description =
      "MariaDB: GET_LOCK named locks bound to the connection (lock=named) or a lease-table row with a fencing "
      "token (lock=lease), on one server or a 3-node Galera cluster (cluster=galera)";
  info.server_nodes = {"n1"};
  info.promise =
      "lock=named: the lock is the connection's until it ends (released, killed, wait_timeout, a restart); "
      "lock=lease: the row is the holder's until its expiry on the server's clock, and its token increases";
  // mariadbd's SST script needs rsync on every Galera node; the package depends on it.
  info.binaries = {{"mariadbd", "mariadb-server"}, {"mariadb-install-db", "mariadb-server"}, {"rsync", "rsync"}};
  info.options = mariadb_option_specs();
  // mariadbd reads the time through libc (NOW(6) is its clock_gettime), which libfcclock reaches.
  // kill-session: every client session registers itself, and the server KILLs the holder's.
  info.offers = {Capability::kServerClocksReachable, Capability::kKillsSessions};
  info.make_server = [](const BackendOptions& options) -> std::unique_ptr<LockServer> {
    return std::make_unique<MariadbServer>(options);
  };
  info.make_client = [](const nlohmann::json& config, const std::string& client_name) -> std::unique_ptr<LockClient> {
    return make_mariadb_lock_client(MariadbClientConfig::from_json(config), client_name);
  };
  info.endpoints = [](const nlohmann::json& config) {
    std::vector<std::string> out;
    for (const auto& s : MariadbClientConfig::from_json(config).servers) out.push_back(s.host + ":" + std::to_string(s.port));
    return out;
  };
  return info;
}

}  // namespace fencecheck
