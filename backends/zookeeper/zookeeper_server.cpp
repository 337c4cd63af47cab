#include "backends/zookeeper/zookeeper_server.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <stdexcept>

#include "backends/zookeeper/four_letter.h"
#include "backends/zookeeper/zookeeper_backend.h"
#include "backends/zookeeper/zookeeper_lock_client.h"
#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

// The run that makes the class archive: how long it may take to lead, and to write the
// archive once told to exit (about half a second).
constexpr milliseconds kArchiveRunTimeout{20000};
constexpr milliseconds kArchiveWriteGrace{10000};

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

std::string class_path() { return std::string(kZooKeeperJar) + ":" + kSlf4jSimpleJar; }

// The JVM options of every server, and of the run that makes their class archive.
std::vector<std::string> jvm_options() {
  return {"-Xmx256m",
          // Serial GC: three JVMs share two cores, and parallel GC threads would fight over them.
          "-XX:+UseSerialGC",
          // C1 alone: C2's compiling cost each JVM about 0.15-0.2 core-seconds before it was
          // ready, while three of them share two cores; a server that handles a few hundred
          // requests a second does not need C2's code.
          "-XX:TieredStopAtLevel=1",
          // No /tmp/hsperfdata_<user>/<pid> file per JVM, which a killed server left behind.
          "-XX:-UsePerfData",
          "-Djava.net.preferIPv4Stack=true",
          "-Dorg.slf4j.simpleLogger.showDateTime=true",
          "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
          // Every readiness and leader probe is a `srvr` four-letter word, which these
          // log at INFO: without this, a log tail quoted in an error is all probes.
          "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.NIOServerCnxn=warn",
          "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.NettyServerCnxn=warn"};
}

// `java <jvm_options> <extra> -cp <class path> <rest>`: every JVM the backend starts.
std::vector<std::string> java_argv(const std::vector<std::string>& extra, const std::vector<std::string>& rest) {
  std::vector<std::string> argv = {"java"};
  const std::vector<std::string> options = jvm_options();
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"-cp", class_path()});
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

// `java … QuorumPeerMain zoo.cfg`: a server, with archive_option (the archive it maps, or
// the one it writes at exit; empty: none) among the JVM options.
std::vector<std::string> server_argv(const std::string& archive_option, const std::filesystem::path& zoo_cfg) {
  std::vector<std::string> extra;
  if (!archive_option.empty()) extra.push_back(archive_option);
  return java_argv(extra, {"org.apache.zookeeper.server.quorum.QuorumPeerMain", zoo_cfg.string()});
}

// The files a class archive is made from besides the options: the JVM (its launcher,
// libjvm, and the JDK's own archive, which ours extends) and the jars.
std::vector<std::filesystem::path> archive_inputs() {
  std::vector<std::filesystem::path> files = {kZooKeeperJar, kSlf4jSimpleJar};
  if (auto java = os::find_executable("java")) {
    files.push_back(*java);
    std::error_code ec;
    const std::filesystem::path server = std::filesystem::canonical(*java, ec).parent_path().parent_path() / "lib/server";
    if (!ec) files.insert(files.end(), {server / "libjvm.so", server / "classes.jsa"});
  }
  return files;
}

// A file this user made and nobody else may change.
bool private_file(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
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
  // Before any server is launched, so that they all start with it.
  if (node == nodes().front()) archive_ = class_archive(runtime, node, dir / "class-archive");
}

ProcessSpec ZooKeeperServer::daemon(const std::string& node) const {
  const Member& m = member(node);
  ProcessSpec spec;
  spec.node = node;
  spec.name = "zookeeper";
  spec.argv = server_argv(archive_.empty() ? "" : "-XX:SharedArchiveFile=" + archive_.string(), m.dir / "zoo.cfg");
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

void ZooKeeperServer::setup(Runtime& runtime, const std::filesystem::path& nodes_dir) {
  archive_.clear();  // configure() of the first node finds or makes it
  try {
    DaemonServer::setup(runtime, nodes_dir);
  } catch (const HarnessError& e) {
    if (archive_.empty()) throw;
    throw HarnessError(std::string(e.what()) + "\n(the servers ran with the class archive " + archive_.string() +
                       ", made by an earlier run: if the log shows the JVM failing on it, delete it, and the "
                       "next run makes it again)");
  }
}

std::filesystem::path ZooKeeperServer::class_archive(Runtime& runtime, const std::string& node,
                                                    const std::filesystem::path& dir) {
  auto cache = reuse_dir(runtime, "zookeeper");
  if (!cache) return {};
  std::vector<std::string> parts = jvm_options();
  parts.push_back(class_path());
  const std::string key = fingerprint(parts, archive_inputs());
  const std::filesystem::path archive = *cache / ("classes-" + key + ".jsa");
  const std::filesystem::path failed = *cache / ("classes-" + key + ".failed");
  // A failed try is not repeated for a day (each costs seconds); a new JVM or ZooKeeper
  // has another key, and deleting the .failed file asks for a new try at once.
  std::error_code ec;
  const auto failed_at = std::filesystem::last_write_time(failed, ec);
  const bool failed_lately = !ec && std::filesystem::file_time_type::clock::now() - failed_at < std::chrono::hours(24);
  if (!private_file(archive) && !failed_lately) make_class_archive(runtime, node, dir, archive, failed);
  return private_file(archive) ? archive : std::filesystem::path();
}

void ZooKeeperServer::make_class_archive(Runtime& runtime, const std::string& node,
                                         const std::filesystem::path& dir, const std::filesystem::path& archive,
                                         const std::filesystem::path& failed) {
  namespace fs = std::filesystem;
  // Written beside its final name, then renamed: a server never maps half an archive
  // (which crashes the JVM). When two runs race, the last rename wins; both archives are good.
  const fs::path fresh = partial_path(archive);
  std::error_code ec;
  fs::remove(fresh, ec);
  // An ensemble of one: it elects itself, so the run loads the classes of a leader.
  ZooKeeperPeer self{1, runtime.node(node).address, runtime.port(node, "zk-archive-client", 2182),
                     runtime.port(node, "zk-archive-quorum", 2889), runtime.port(node, "zk-archive-election", 3889)};
  fs::create_directories(dir / "data", ec);
  if (ec) return;  // not the archive's fault: no .failed, and the servers start without one
  try {
    write_file(dir / "data" / "myid", "1\n");
    write_file(dir / "zoo.cfg", zookeeper_config_text(options_, self, {self}, dir / "data") + "standaloneEnabled=false\n");
  } catch (const HarnessError&) {
    return;
  }
  std::string why;  // empty: the archive was made
  try {
    ProcessSpec spec;
    spec.node = node;
    spec.name = "zookeeper (class archive run)";
    spec.argv = server_argv("-XX:ArchiveClassesAtExit=" + fresh.string(), dir / "zoo.cfg");
    spec.log = dir / "zookeeper.log";
    spec.cwd = dir;
    Process& p = runtime.spawn(spec);
    Readiness r = Readiness::kTimedOut;
    try {
      const HostPort t = runtime.probe_target(node, self.address, self.client_port);
      r = runtime.await_ready(
          p,
          [&] {
            std::optional<std::string> answer;
            runtime.run_in(node, [&] { answer = zk_four_letter(t.address, t.port, "srvr", milliseconds(500)); });
            return answer && zk_srvr_mode(*answer) == "leader";
          },
          Deadline::after(kArchiveRunTimeout));
    } catch (const HarnessError& e) {
      why = e.what();  // it exited first
    }
    if (r == Readiness::kGaveUp) {
      p.crash(Deadline::after(milliseconds(1000)));
      throw Interrupted("zookeeper: the run that makes the class archive was interrupted");
    }
    p.stop(kArchiveWriteGrace);  // SIGTERM: the JVM writes the archive as it exits
    const std::optional<int> status = p.exit_status();
    if (why.empty() && r != Readiness::kReady) why = "it did not lead within " + std::to_string(kArchiveRunTimeout.count()) + " ms";
    if (why.empty() && (!status || !WIFEXITED(*status))) {
      why = "it did not exit within " + std::to_string(kArchiveWriteGrace.count()) + " ms of SIGTERM";
    }
    if (why.empty() && !private_file(fresh)) why = "it wrote no archive";
    if (why.empty()) {
      // A JVM that cannot map the archive refuses to start here (-Xshare:on) rather than
      // crash a server later.
      const std::vector<std::string> check = java_argv({"-Xshare:on", "-XX:SharedArchiveFile=" + fresh.string()}, {"-version"});
      runtime.run_to_end({node, "java -Xshare:on", check, {}, dir / "check.log", {}, {}}, kArchiveRunTimeout);
      if (::rename(fresh.c_str(), archive.c_str()) != 0) why = "cannot rename it: " + os::strerror_string(errno);
    }
  } catch (const HarnessError& e) {
    why = e.what();
  } catch (...) {
    fs::remove(fresh, ec);
    throw;  // Interrupted
  }
  fs::remove(fresh, ec);
  if (why.empty()) {
    fs::remove_all(dir, ec);  // its log, config and data served their purpose
  } else {
    std::ofstream out(failed, std::ios::trunc);
    out << "the class archive of the ZooKeeper servers could not be made (" << why << "); see " << dir.string() << "\n";
  }
}

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
