#include "backends/postgres/postgres_backend.h"

#include "backends/postgres/postgres_lock_client.h"
#include "backends/postgres/postgres_server.h"

namespace fencecheck {

const BackendInfo::Binary& postgres_server_binary() {
  // Debian keeps each major version's programs in its own directory, off $PATH.
  static const BackendInfo::Binary binary{"postgres", "postgresql", {"/usr/lib/postgresql/*/bin"}};
  return binary;
}

BackendInfo postgres_backend_info() {
  BackendInfo info;
  info.name = "postgres";
  info.description =
      "one PostgreSQL server; a lease-table row with a fencing token (lock=lease) or session "
      "advisory locks (lock=advisory)";
  info.server_nodes = {"n1"};
  info.promise = "lock=lease: the row is the holder's until its expiry, and its token increases; lock=advisory: the lock is the session's until it ends";
  info.binaries = {postgres_server_binary(), {"initdb", "postgresql", postgres_server_binary().dirs}};
  info.options = postgres_option_specs();
  // configure() appends to postgresql.conf in the data directory initdb made, and the
  // server's user follows the controller's: both assume the node sees the controller's files.
  // kill_sessions: pg_terminate_backend of every session a client node opened.
  info.offers = {Capability::kServerClocksReachable, Capability::kKillsSessions};
  info.needs = {Capability::kSharesFiles};
  info.reasons = {
      {Capability::kSharesFiles, "its setup edits the data directory initdb made on the node from the controller"}};
  info.make_server = [](const BackendOptions& options) -> std::unique_ptr<LockServer> {
    return std::make_unique<PostgresServer>(PostgresServerOptions::from_options(options));
  };
  info.make_client = [](const nlohmann::json& config,
                        const std::string& client_name) -> std::unique_ptr<LockClient> {
    return make_postgres_lock_client(PostgresClientConfig::from_json(config), client_name);
  };
  info.endpoints = [](const nlohmann::json& config) -> std::vector<std::string> {
    PostgresClientConfig c = PostgresClientConfig::from_json(config);
    return {c.host + ":" + std::to_string(c.port)};
  };
  return info;
}

}  // namespace fencecheck
