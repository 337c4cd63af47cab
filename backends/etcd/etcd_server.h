// The server side of the `etcd` backend: a 3-member etcd 3.4 cluster on n1, n2, n3 (a
// DaemonServer), one Debian `etcd` per node, its data directory in the node's folder of
// the run directory (nodes/<node>/data), peer and client URLs on the node's address,
// its log (zap, JSON lines) in nodes/<node>/etcd.log.
//
// Readiness: a member is ready once GET /health on its client port says "true", that is
// once it belongs to a cluster with a leader. setup() launches all three before it waits
// for any; start() waits only when the node makes a majority run (DaemonServer::
// start_in_quorum). A killed member restarts on its data directory (etcd fsyncs its WAL
// before it answers, so nothing acknowledged is lost). leader() asks every running,
// unpaused member for its status and names the one that leads, the newest term winning
// while a deposed leader has not noticed yet.
//
// Clocks: etcd is a static Go binary that reads the time through the vDSO; libfcclock's
// LD_PRELOAD cannot reach it, so clock faults on its nodes are refused (the run checks
// that a node's clock file is mapped). Not thread-safe (see LockServer).
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
#include "backends/registry.h"

namespace fencecheck {

std::vector<BackendOption> etcd_option_specs();

struct EtcdMember {
  std::string name;  // the node: n1, n2, n3
  std::string address;
  std::uint16_t client_port = 0;
  std::uint16_t peer_port = 0;
};

// The etcd command line of member `self` of the cluster `members`, keeping its data in
// data_dir. Pure; for the unit test.
std::vector<std::string> etcd_command_line(const std::string& program, const EtcdMember& self,
                                           const std::vector<EtcdMember>& members,
                                           const std::filesystem::path& data_dir);

class EtcdServer : public DaemonServer {
 public:
  // options: resolved backend options (lock, lease_ttl_s); throws std::invalid_argument
  // for a bad value.
  explicit EtcdServer(const BackendOptions& options, std::vector<std::string> nodes = {"n1", "n2", "n3"});

  // {"endpoints": ["a:p", …], "lock": …, "lease_ttl_s": …} (EtcdClientConfig).
  nlohmann::json client_config() const override;
  nlohmann::json client_config_at(const std::vector<HostPort>& servers) const override;
  void start(const std::string& node) override { start_in_quorum(node); }
  std::optional<std::string> leader() override;

 protected:
  void configure(Runtime& runtime, const std::string& node, const std::filesystem::path& dir) override;
  ProcessSpec daemon(const std::string& node) const override;
  bool ready(Runtime& runtime, const std::string& node) override;

 private:
  struct Node {
    EtcdMember member;
    std::filesystem::path dir;
  };
  const Node& node_of(const std::string& node) const;

  std::string lock_;
  std::int64_t lease_ttl_s_ = 2;
  std::string program_;
  std::vector<EtcdMember> members_;
  std::map<std::string, Node> nodes_;
};

}  // namespace fencecheck
