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
//
// Start-up. Three JVMs starting together on two cores are bound by CPU: the servers run
// C1 alone (-XX:TieredStopAtLevel=1) and map a class archive (AppCDS, -XX:SharedArchiveFile)
// of the classes a server loads as it starts, which spares each JVM finding, parsing and
// verifying them. Under the local and netns runtimes (whose nodes run this machine's java)
// setup() makes the archive at the first run, with this JVM, jars and options, and keeps it
// in DaemonServer::reuse_dir("zookeeper") for later runs (classes-<key>.jsa; a new JVM or
// jar makes a new key): a one-member ensemble runs on the first node until it leads, and
// writes the archive as it exits — about two seconds, once. When that fails, why goes into
// classes-<key>.failed and later runs start without an archive (no new try for a day).
// Without a cache the servers start without one, as under docker and ssh.
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
  // DaemonServer's setup; the first node's configure() finds or makes the class archive.
  void setup(Runtime& runtime, const std::filesystem::path& nodes_dir) override;
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
  // The kept class archive the servers map, made first on node in dir when missing; empty
  // when there is no cache here, or it could not be made.
  std::filesystem::path class_archive(Runtime& runtime, const std::string& node, const std::filesystem::path& dir);
  // Runs a one-member ensemble on node in dir until it leads, stops it, and keeps the
  // classes it loaded as `archive`; when that run fails, writes why into `failed` instead
  // (when dir cannot even be made, neither). Blocks up to about 50 s (20 s to lead, 10 s
  // to exit, 20 s to check the archive); Interrupted on the runtime's interrupt check
  // while it waits for the leader.
  void make_class_archive(Runtime& runtime, const std::string& node, const std::filesystem::path& dir,
                          const std::filesystem::path& archive, const std::filesystem::path& failed);

  ZooKeeperServerOptions options_;
  std::map<std::string, Member> members_;
  std::filesystem::path archive_;  // -XX:SharedArchiveFile of the servers; empty: none
};

}  // namespace fencecheck
