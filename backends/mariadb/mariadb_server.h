// The server side of the `mariadb` backend (a DaemonServer): one MariaDB server on n1
// (cluster=none), or a three-node Galera cluster on n1, n2, n3 (cluster=galera), each
// server a `mariadbd --no-defaults` whose whole configuration is its command line
// (mariadb_command_line), its data directory in the node's folder (nodes/<node>/data), its
// log (stderr) in nodes/<node>/mariadb.log. The data directories are the run's scratch: a few
// dozen MB per node, removed at teardown (and by `fencecheck clean` after a crash, for they are
// recorded in the RunState); the logs stay.
//
// Data directory. mariadb-install-db makes the same directory at every run; the first run
// under local or netns keeps a pristine copy in DaemonServer::reuse_dir("mariadb") and
// later runs copy it (cp -a) into each node, as the postgres backend keeps initdb's
// cluster. Fresh either way: nothing a run does goes back into the kept copy.
//
// Galera. setup() bootstraps n1 (--wsrep-new-cluster), waits until it is ready, then starts
// n2 and n3 one at a time: each joins by a state transfer (SST by rsync from a donor; the
// joiner's rsync daemon runs under the server, as MariaDB's wsrep_sst_rsync starts it).
// Started together, joiners take each other for a cluster of their own and the start took
// twice as long. A node started again later (kill, restart) rejoins the running ones
// through IST or SST; after all three were killed, Galera's own pc.recovery reforms the
// cluster once every member is back. Ready = the server answers and (Galera) its
// wsrep_ready is ON: a node outside the primary component is not ready, which is the
// system's behaviour under partitions, not a failure of the bench. Partitions cut the
// group-communication, IST and SST ports with every other port: they are on the node's
// address.
//
// As root the server runs as the user mysql (mariadbd --user; its files are handed to
// mysql), in its own PID namespace (unshare --pid --fork), so that an SST's shell and rsync
// die with it, however it dies. Without root it runs as the calling user.
//
// Sessions. kill_sessions(client) ends, on every running server, the sessions the client
// node registered there (mariadb_lock_client.h, kill_client_sessions).
//
// Thread-safety as LockServer; blocking: setup ≤ the readiness timeout per node,
// kill_sessions by its deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/daemon_server.h"
#include "backends/mariadb/mariadb_lock_client.h"
#include "backends/registry.h"

namespace fencecheck {

std::vector<BackendOption> mariadb_option_specs();

// One server of the cluster, as every other member addresses it.
struct MariadbMember {
  std::string name;  // the node: n1, n2, n3
  std::string address;
  std::uint16_t port = 3306;         // SQL clients
  std::uint16_t group_port = 4567;   // Galera group communication
  std::uint16_t ist_port = 4568;     // incremental state transfer
  std::uint16_t sst_port = 4444;     // state snapshot transfer (rsync daemon)
};

// What the servers are started with, from the resolved backend options.
struct MariadbServerSettings {
  bool galera = false;
  std::int64_t wait_timeout_s = 28800;
  bool snapshot_isolation = false;  // innodb_snapshot_isolation
  int wsrep_sync_wait = 0;
  // Throws std::invalid_argument for a bad value.
  static MariadbServerSettings from_options(const BackendOptions& options);
};

// Paths and the user a server runs with.
struct MariadbPaths {
  std::string mariadbd;            // the program
  std::string galera_provider;     // libgalera_smm.so (Galera only)
  std::filesystem::path data_dir;
  std::string user;                // "mysql" as root; empty otherwise
};

// The mariadbd command line of member `self` (server_id = its 1-based place in members);
// bootstrap: it founds a new Galera cluster. Pure; for the unit test.
std::vector<std::string> mariadb_command_line(const MariadbPaths& paths, const MariadbServerSettings& settings,
                                              const MariadbMember& self, const std::vector<MariadbMember>& members,
                                              bool bootstrap);

class MariadbServer : public DaemonServer {
 public:
  // options: resolved backend options; throws std::invalid_argument for a bad value.
  explicit MariadbServer(const BackendOptions& options);

  // DaemonServer's setup (Galera: one node after the other), then the schema on n1.
  void setup(Runtime& runtime, const std::filesystem::path& nodes_dir) override;
  // MariadbClientConfig: every server in node order, the lock kind and lease mode.
  nlohmann::json client_config() const override;
  // Stops every server, then removes their data directories (the logs stay).
  void teardown(const Deadline& deadline) noexcept override;
  // Ends the sessions `client` registered on the running servers (KILL CONNECTION on each
  // server: a client's sessions are on its own node's); returns how many. A Galera node
  // outside the primary component is asked too (its table is read dirty). Throws
  // HarnessError when no running server could be asked by the deadline.
  int kill_sessions(const std::string& client, const Deadline& deadline) override;

 protected:
  void configure(Runtime& runtime, const std::string& node, const std::filesystem::path& dir) override;
  ProcessSpec daemon(const std::string& node) const override;
  bool ready(Runtime& runtime, const std::string& node) override;

 private:
  struct Node {
    MariadbMember member;
    std::filesystem::path dir;
  };
  const Node& node_of(const std::string& node) const;
  // A fresh data directory in dir/data: the kept copy, or mariadb-install-db (≤ 60 s).
  void make_data_dir(Runtime& runtime, const std::string& node, const std::filesystem::path& dir);
  std::vector<std::string> install_db_command(const std::filesystem::path& data) const;
  // Runs sql on node's server from inside its network; the result.
  MariadbResult query(const std::string& node, const std::string& sql, std::chrono::milliseconds timeout);

  MariadbClientConfig client_;
  MariadbServerSettings settings_;
  bool as_root_;
  std::string mariadbd_, install_db_, provider_;  // found at the first configure
  std::vector<MariadbMember> members_;
  std::map<std::string, Node> nodes_;
  std::optional<std::string> bootstrap_node_;  // set during setup: the node founding the cluster
};

}  // namespace fencecheck
