#include "backends/zookeeper/zookeeper_server.h"

#include <fstream>
#include <stdexcept>

#include "backends/zookeeper/four_letter.h"
#include "backends/zookeeper/zookeeper_backend.h"
#include "backends/zookeeper/zookeeper_lock_client.h"
#include "platform/errors.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

constexpr const char* kZooKeeperJar = "/usr/share/java/zookeeper.jar";
// The manifest of zookeeper.jar names its dependencies in /usr/share/java; slf4j-simple
// is the logging binding (without one the servers log nothing).
constexpr const char* kSlf4jSimpleJar = "/usr/share/java/slf4j-simple.jar";

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw HarnessError("zookeeper: cannot write " + path.string());
}

}  // namespace

std::optional<std::string> zookeeper_install_problem() {
  // The programs and their packages as the registry entry names them.
  if (auto missing = missing_binary_message(zookeeper_backend_info())) return missing;
  for (const char* jar : {kZooKeeperJar, kSlf4jSimpleJar}) {
    if (!std::filesystem::exists(jar)) {
      return std::string(jar) + " is missing: apt-get install zookeeper (or run scripts/setup.sh)";
    }
  }
  return std::nullopt;
}

std::vector<BackendOption> zookeeper_option_specs() {
  return {{"session_timeout_ms",
           "ZooKeeper session timeout T the clients ask for (ms): a silent holder loses its lock "
           "T to T + tick after it went silent; within 2..20 x tick_ms",
           "6000",
           {}},
          {"tick_ms", "the servers' tickTime (ms): sessions expire on tick boundaries", "1000", {}}};
}

ZooKeeperServerOptions ZooKeeperServerOptions::from_options(const BackendOptions& options) {
  for (const auto& [name, value] : options) {
    if (name != "session_timeout_ms" && name != "tick_ms") {
      throw std::invalid_argument("unknown zookeeper option \"" + name + "\"");
    }
  }
  ZooKeeperServerOptions o;
  o.tick = milliseconds(option_number(options, "zookeeper", "tick_ms", 1, 60000));
  o.session_timeout = milliseconds(option_number(options, "zookeeper", "session_timeout_ms", 1, 1200000));
  if (o.session_timeout < 2 * o.tick || o.session_timeout > 20 * o.tick) {
    throw std::invalid_argument(
        "zookeeper option session_timeout_ms (" + std::to_string(o.session_timeout.count()) +
        ") must lie within 2..20 x tick_ms (" + std::to_string(2 * o.tick.count()) + ".." +
        std::to_string(20 * o.tick.count()) + "); the servers would silently clamp it");
  }
  return o;
}

std::string zookeeper_config_text(const ZooKeeperServerOptions& options, const ZooKeeperPeer& self,
                                  const std::vector<ZooKeeperPeer>& peers,
                                  const std::filesystem::path& data_dir) {
  std::string conf = "# written by fencecheck\n";
  conf += "tickTime=" + std::to_string(options.tick.count()) + "\n";
  conf += "initLimit=10\nsyncLimit=5\n";
  conf += "dataDir=" + data_dir.string() + "\n";
  conf += "clientPort=" + std::to_string(self.client_port) + "\n";
  conf += "clientPortAddress=" + self.address + "\n";
  // The AdminServer (Jetty on 8080 by default) would collide between nodes on loopback.
  conf += "admin.enableServer=false\n";
  conf += "4lw.commands.whitelist=srvr,ruok,mntr,stat,conf\n";
  // Explicit, so that the negotiated timeout is exactly what from_options() checked.
  conf += "minSessionTimeout=" + std::to_string(2 * options.tick.count()) + "\n";
  conf += "maxSessionTimeout=" + std::to_string(20 * options.tick.count()) + "\n";
  for (const ZooKeeperPeer& p : peers) {
    conf += "server." + std::to_string(p.id) + "=" + p.address + ":" + std::to_string(p.quorum_port) +
            ":" + std::to_string(p.election_port) + "\n";
  }
  return conf;
}

ZooKeeperServer::ZooKeeperServer(ZooKeeperServerOptions options, std::vector<std::string> nodes)
    : DaemonServer(std::move(nodes), options.ready_timeout), options_(options) {}

const ZooKeeperServer::Member& ZooKeeperServer::member(const std::string& node) const {
  return configured(members_, node, "zookeeper");
}

void ZooKeeperServer::configure(Runtime& runtime, const std::string& node,
                                const std::filesystem::path& dir) {
  if (auto problem = zookeeper_install_problem()) throw HarnessError("zookeeper: " + *problem);
  // Every member's zoo.cfg lists the whole ensemble; Runtime::port is stable, so asking
  // for the other nodes' ports here gives what their own configure() will use.
  std::vector<ZooKeeperPeer> peers;
  for (std::size_t i = 0; i < nodes().size(); ++i) {
    const std::string& n = nodes()[i];
    peers.push_back({static_cast<int>(i + 1), runtime.node(n).address, runtime.port(n, "zk-client", 2181),
                     runtime.port(n, "zk-quorum", 2888), runtime.port(n, "zk-election", 3888)});
  }
  const ZooKeeperPeer* self = nullptr;
  for (std::size_t i = 0; i < nodes().size(); ++i) {
    if (nodes()[i] == node) self = &peers[i];
  }
  if (self == nullptr) throw HarnessError("zookeeper: " + node + " is not a node of this ensemble");
  std::filesystem::path data = dir / "data";
  std::error_code ec;
  std::filesystem::create_directories(data, ec);
  if (ec) throw HarnessError("zookeeper: cannot create " + data.string() + ": " + ec.message());
  write_file(data / "myid", std::to_string(self->id) + "\n");
  write_file(dir / "zoo.cfg", zookeeper_config_text(options_, *self, peers, data));
  members_[node] = Member{*self, dir};
}

ProcessSpec ZooKeeperServer::daemon(const std::string& node) const {
  const Member& m = member(node);
  ProcessSpec spec;
  spec.node = node;
  spec.name = "zookeeper";
  // Serial GC: three JVMs share two cores, and parallel GC threads would fight over them.
  spec.argv = {"java",
               "-Xmx256m",
               "-XX:+UseSerialGC",
               "-Djava.net.preferIPv4Stack=true",
               "-Dorg.slf4j.simpleLogger.showDateTime=true",
               "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
               // Every readiness and leader probe is a `srvr` four-letter word, which these
               // log at INFO: without this, a log tail quoted in an error is all probes.
               "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.NIOServerCnxn=warn",
               "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.NettyServerCnxn=warn",
               "-cp",
               std::string(kZooKeeperJar) + ":" + kSlf4jSimpleJar,
               "org.apache.zookeeper.server.quorum.QuorumPeerMain",
               (m.dir / "zoo.cfg").string()};
  spec.log = m.dir / "zookeeper.log";
  spec.cwd = m.dir;
  return spec;
}

std::optional<std::string> ZooKeeperServer::mode(Runtime& runtime, const std::string& node,
                                                 milliseconds timeout) {
  const ZooKeeperPeer& p = member(node).peer;
  std::optional<std::string> answer;
  const HostPort t = runtime.probe_target(node, p.address, p.client_port);
  runtime.run_in(node, [&] { answer = zk_four_letter(t.address, t.port, "srvr", timeout); });
  return answer ? zk_srvr_mode(*answer) : std::nullopt;
}

bool ZooKeeperServer::ready(Runtime& runtime, const std::string& node) {
  std::optional<std::string> m = mode(runtime, node, milliseconds(500));
  return m == "leader" || m == "follower";
}

void ZooKeeperServer::start(const std::string& node) { start_in_quorum(node); }

std::optional<std::string> ZooKeeperServer::leader() {
  for (const auto& node : answering_nodes()) {
    if (mode(runtime(), node, milliseconds(500)) == "leader") return node;
  }
  return std::nullopt;
}

nlohmann::json ZooKeeperServer::client_config() const {
  std::vector<HostPort> members;
  for (const auto& node : nodes()) members.push_back({member(node).peer.address, member(node).peer.client_port});
  return client_config_at(members);
}

nlohmann::json ZooKeeperServer::client_config_at(const std::vector<HostPort>& servers) const {
  if (servers.empty()) throw std::invalid_argument("backend zookeeper needs at least one server");
  ZooKeeperClientConfig c;
  for (const HostPort& s : servers) c.hosts += (c.hosts.empty() ? "" : ",") + s.address + ":" + std::to_string(s.port);
  c.session_timeout = options_.session_timeout;
  return c.to_json();
}

}  // namespace fencecheck
