// The server side of the `zookeeper` backend: a 3-node ensemble on n1, n2, n3 (a
// DaemonServer), each node a QuorumPeerMain JVM started straight from Debian's jars (the
// Debian init scripts assume one server per host).
//
// Options (--backend-opt): `tick_ms` (the servers' tickTime, default 1000: sessions expire
// on tick boundaries, so a session ends between T and T + tick after its holder went
// silent) and `session_timeout_ms` (T, what every client asks for, default 6000; it must
// lie within 2..20 × tick_ms, the bounds the servers would otherwise clamp it to
// silently).
//
// Readiness: a node is ready once it answers `srvr` with "Mode: leader" or "Mode:
// follower", that is once it belongs to a quorum that has a leader. setup() therefore
// launches all three before it waits for any, and start() of a node waits only when that
// node makes a majority run (a node alone cannot answer; after a crash of all three the
// second start is the one that waits). leader() asks every running, unpaused node and
// names the one in Mode: leader. Not thread-safe (see LockServer).
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

struct ZooKeeperServerOptions {
  std::chrono::milliseconds tick{1000};
  std::chrono::milliseconds session_timeout{6000};
  // Three JVMs start together on two cores: the research measured 5 s; leave room.
  std::chrono::milliseconds ready_timeout{60000};
  // From resolved backend options. Throws std::invalid_argument for a value that is not a
  // positive integer, or a session timeout outside 2..20 × tick.
  static ZooKeeperServerOptions from_options(const BackendOptions& options);
};

std::vector<BackendOption> zookeeper_option_specs();

// nullopt when the registry entry's programs (java, zkServer.sh) and the jars the servers
// run from are installed; otherwise one message saying what is missing and what to install.
std::optional<std::string> zookeeper_install_problem();

// Where one ensemble member listens.
struct ZooKeeperPeer {
  int id = 0;  // myid: 1, 2, 3
  std::string address;
  std::uint16_t client_port = 0;
  std::uint16_t quorum_port = 0;
  std::uint16_t election_port = 0;
};

// The zoo.cfg text of peer `self` of the ensemble `peers`, keeping its data in data_dir.
std::string zookeeper_config_text(const ZooKeeperServerOptions& options, const ZooKeeperPeer& self,
                                  const std::vector<ZooKeeperPeer>& peers,
                                  const std::filesystem::path& data_dir);

class ZooKeeperServer : public DaemonServer {
 public:
  explicit ZooKeeperServer(ZooKeeperServerOptions options,
                           std::vector<std::string> nodes = {"n1", "n2", "n3"});

  // {"hosts": "a:p,b:p,c:p", "session_timeout_ms": T} (ZooKeeperClientConfig).
  nlohmann::json client_config() const override;
  nlohmann::json client_config_at(const std::vector<HostPort>& servers) const override;
  void start(const std::string& node) override;
  std::optional<std::string> leader() override;

 protected:
  void configure(Runtime& runtime, const std::string& node,
                 const std::filesystem::path& dir) override;
  ProcessSpec daemon(const std::string& node) const override;
  bool ready(Runtime& runtime, const std::string& node) override;

 private:
  struct Member {
    ZooKeeperPeer peer;
    std::filesystem::path dir;
  };
  const Member& member(const std::string& node) const;
  // The node's Mode as its `srvr` answer says, asked from inside its network.
  std::optional<std::string> mode(Runtime& runtime, const std::string& node,
                                  std::chrono::milliseconds timeout);

  ZooKeeperServerOptions options_;
  std::map<std::string, Member> members_;
};

}  // namespace fencecheck
