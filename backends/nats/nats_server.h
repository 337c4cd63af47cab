// The server side of the `nats` backend: nats-server 2.9 with JetStream, as a 3-node
// cluster on n1, n2, n3 (servers=3, the default) or one server on n1 (servers=1), a
// DaemonServer. Each node has a config file (nodes/<node>/nats.conf: server name = the
// node, client, cluster route and HTTP monitoring ports on the node's address, the routes
// to every other node) and its own store directory (nodes/<node>/store); its log goes to
// nodes/<node>/nats.log.
//
// Readiness: a node is ready once its monitoring port answers /jsz with JetStream on and,
// in a cluster, a meta leader known. setup() then makes the key-value bucket the clients
// lock in (NatsBucket: history 1, file storage, max age = max_age_ms, replicas = servers)
// and waits until its stream has a leader and every replica is current.
//
// Durability, as nats-server 2.9.10 has it: JetStream writes each message to its block
// file at once (write(2): the kernel keeps it across a crash of the process) and fsyncs
// only every 2 minutes (its file store's sync interval, not configurable in 2.9: the
// `sync_interval` option, and `sync_interval: always`, came in 2.10), so a kill of every
// server loses nothing the kernel took — only a power failure would lose what was not
// fsynced. A killed node restarts on its store directory.
//
// crash_loses=unsynced makes a kill of a node its power failure instead: each node's store
// lives on fclazydisk (backends/lazy_disks.h, over nodes/<node>/disk), which keeps every
// write that was not fsynced in memory until writeback_ms have passed (the kernel's dirty
// page write-back), and a kill of the node kills its disk too. Local or netns runtime, root.
//
// leader() names the node that leads the bucket's stream (where every lock write goes),
// by each answering node's own /jsz: the first that says it leads it. Clocks: nats-server
// is a static Go binary that reads the time through the vDSO, out of libfcclock's reach.
// Not thread-safe (see LockServer).
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
#include "backends/lazy_disks.h"
#include "backends/nats/nats_connection.h"
#include "backends/registry.h"

namespace fencecheck {

std::vector<BackendOption> nats_option_specs();

struct NatsServerOptions {
  int servers = 3;
  std::chrono::milliseconds max_age{2000};
  std::chrono::milliseconds ready_timeout{30000};
  bool crash_loses_unsynced = false;
  std::chrono::milliseconds writeback{5000};
  // From resolved backend options. Throws std::invalid_argument naming a bad option.
  static NatsServerOptions from_options(const BackendOptions& options);
  NatsBucket bucket() const;
};

struct NatsNode {
  std::string name;  // the node, also the server's name: n1
  std::string address;
  std::uint16_t client_port = 0;
  std::uint16_t cluster_port = 0;
  std::uint16_t http_port = 0;
};

// The config file of node `self` of `cluster` (one node: no cluster block), its JetStream
// store in store_dir. Pure; for the unit test.
std::string nats_config(const NatsNode& self, const std::vector<NatsNode>& cluster,
                        const std::filesystem::path& store_dir);
// What a node's /jsz body says: whether JetStream runs and, in a cluster, the meta leader
// is known (ready), and which server leads `stream` by that node's view (empty: none).
bool nats_jsz_ready(const std::string& body, bool clustered);
std::string nats_jsz_stream_leader(const std::string& body, const std::string& stream);

class NatsServer : public DaemonServer {
 public:
  explicit NatsServer(NatsServerOptions options);

  void setup(Runtime& runtime, const std::filesystem::path& nodes_dir) override;
  // {"servers": [...], "bucket", "max_age_ms", "replicas"} (NatsClientConfig).
  nlohmann::json client_config() const override;
  nlohmann::json client_config_at(const std::vector<HostPort>& servers) const override;
  void start(const std::string& node) override { start_in_quorum(node); }
  // With crash_loses=unsynced: the node's disk is mounted first, and a kill crashes it too.
  void launch(const std::string& node) override;
  void kill(const std::string& node, const Deadline& deadline) override;
  void teardown(const Deadline& deadline) noexcept override;
  std::optional<std::string> leader() override;

 protected:
  void configure(Runtime& runtime, const std::string& node, const std::filesystem::path& dir) override;
  ProcessSpec daemon(const std::string& node) const override;
  bool ready(Runtime& runtime, const std::string& node) override;

 private:
  struct Node {
    NatsNode self;
    std::filesystem::path dir;
  };
  const Node& node_of(const std::string& node) const;
  // The /jsz body of node, asked from inside its network; nullopt when it does not answer.
  std::optional<std::string> jsz(Runtime& runtime, const std::string& node, const std::string& query);
  // Makes the bucket from inside n1's network and waits for its stream to be current.
  void make_bucket(Runtime& runtime, const std::filesystem::path& log);

  NatsServerOptions options_;
  std::string program_;  // nats-server's path, found by the first configure()
  std::unique_ptr<LazyDisks> disks_;  // crash_loses=unsynced only
  std::vector<NatsNode> cluster_;
  std::map<std::string, Node> nodes_;
};

}  // namespace fencecheck
