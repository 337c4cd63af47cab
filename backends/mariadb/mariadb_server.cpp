#include "backends/mariadb/mariadb_server.h"

#include <pwd.h>
#include <unistd.h>

#include <stdexcept>

#include "backends/mariadb/mariadb_backend.h"
#include "platform/os_util.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;
namespace fs = std::filesystem;

// A joiner's SST (an rsync of the whole data directory) comes before it answers; a start
// after a crash includes InnoDB's recovery.
constexpr milliseconds kReadyTimeout{60000};
constexpr milliseconds kProbeTimeout{1000};
// Smaller than the default (96 MB of redo log and 128 MB of Galera cache per node): a test
// writes a few rows, and every node's files are made, copied and rsynced at each run.
constexpr const char* kRedoLogSize = "--innodb-log-file-size=8M";
constexpr const char* kGaleraCache = "gcache.size=16M";
constexpr const char* kRootFromAnywhere =
    "INSERT INTO mysql.global_priv (Host, User, Priv) SELECT '%', User, Priv FROM mysql.global_priv "
    "WHERE User = 'root' AND Host = 'localhost';";

std::string flag(const std::string& name, const std::string& value) { return "--" + name + "=" + value; }

std::string addr(const std::string& address, std::uint16_t port) { return address + ":" + std::to_string(port); }

}  // namespace

std::vector<BackendOption> mariadb_option_specs() {
  return {
      {"cluster", "none: one server on n1; galera: three nodes n1..n3 replicating by Galera (wsrep)", "none",
       {"none", "galera"}},
      {"lock",
       "named: GET_LOCK on the client's connection (no token, freed when the connection ends); lease: a "
       "lease-table row with an expiry and a fencing token",
       "named",
       {"named", "lease"}},
      {"lease",
       "with lock=lease, how a client takes the row: read-update (SELECT, then UPDATE in one transaction at "
       "the server's isolation), for-update (SELECT … FOR UPDATE), conditional (one UPDATE … WHERE expired)",
       "conditional",
       {"read-update", "for-update", "conditional"}},
      {"wait_timeout_s", "the server ends a session idle this long, freeing its named locks (MariaDB's default)",
       "28800", {}},
      {"innodb_snapshot_isolation", "ON: a transaction's write to a row changed since its snapshot fails (error 1020)",
       "OFF", {"OFF", "ON"}},
      {"wsrep_sync_wait", "Galera: which statements first wait for the node to apply what the cluster committed "
       "(bitmask, 0..15)", "0", {}},
  };
}

MariadbServerSettings MariadbServerSettings::from_options(const BackendOptions& options) {
  MariadbServerSettings s;
  s.galera = options.at("cluster") == "galera";
  s.wait_timeout_s = option_number(options, "mariadb", "wait_timeout_s", 1, 31536000);
  s.snapshot_isolation = options.at("innodb_snapshot_isolation") == "ON";
  s.wsrep_sync_wait = static_cast<int>(option_number(options, "mariadb", "wsrep_sync_wait", 0, 15));
  return s;
}

std::vector<std::string> mariadb_command_line(const MariadbPaths& paths, const MariadbServerSettings& settings,
                                              const MariadbMember& self, const std::vector<MariadbMember>& members,
                                              bool bootstrap) {
  std::size_t server_id = 1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].name == self.name) server_id = i + 1;
  }
  std::vector<std::string> argv = {
      paths.mariadbd,
      "--no-defaults",  // never /etc/mysql: the command line is the whole configuration
      flag("datadir", paths.data_dir.string()),
      flag("bind-address", self.address),
      flag("port", std::to_string(self.port)),
      // Relative to the data directory, where mariadbd runs: short whatever the store path,
      // and never the system's /run/mysqld, which another server may use.
      "--socket=mariadbd.sock",
      flag("pid-file", (paths.data_dir / "mariadbd.pid").string()),
      // Its internal temporary tables' files are named by its pid, which is 1 for every
      // server in its own PID namespace: in a shared /tmp, one server's deleted another's
      // ("Error on delete of '/tmp/#sql-temptable-1-a-0.MAI'", a CI run with two at once).
      flag("tmpdir", paths.data_dir.string()),
      flag("server-id", std::to_string(server_id)),
      "--skip-name-resolve",
      kRedoLogSize,
      flag("wait-timeout", std::to_string(settings.wait_timeout_s)),
      flag("innodb-snapshot-isolation", settings.snapshot_isolation ? "ON" : "OFF"),
  };
  if (!paths.user.empty()) argv.push_back(flag("user", paths.user));
  if (!settings.galera) return argv;
  std::string peers;
  for (const MariadbMember& m : members) peers += (peers.empty() ? "" : ",") + addr(m.address, m.group_port);
  const std::vector<std::string> galera = {
      "--wsrep-on=ON",
      flag("wsrep-provider", paths.galera_provider),
      flag("wsrep-cluster-address", "gcomm://" + peers),
      flag("wsrep-node-name", self.name),
      flag("wsrep-node-address", addr(self.address, self.group_port)),
      flag("wsrep-provider-options", "gmcast.listen_addr=tcp://" + addr(self.address, self.group_port) +
                                         ";ist.recv_addr=" + addr(self.address, self.ist_port) + ";" + kGaleraCache),
      flag("wsrep-sst-method", "rsync"),
      flag("wsrep-sst-receive-address", addr(self.address, self.sst_port)),
      flag("wsrep-sync-wait", std::to_string(settings.wsrep_sync_wait)),
      // What Galera requires of every node.
      "--binlog-format=ROW",
      "--default-storage-engine=InnoDB",
      "--innodb-autoinc-lock-mode=2",
  };
  argv.insert(argv.end(), galera.begin(), galera.end());
  if (bootstrap) argv.push_back("--wsrep-new-cluster");
  return argv;
}

MariadbServer::MariadbServer(const BackendOptions& options)
    : DaemonServer(options.at("cluster") == "galera" ? std::vector<std::string>{"n1", "n2", "n3"}
                                                     : std::vector<std::string>{"n1"},
                   kReadyTimeout),
      settings_(MariadbServerSettings::from_options(options)),
      as_root_(::geteuid() == 0) {
  client_.lock = parse_mariadb_lock_kind(options.at("lock"));
  client_.lease = parse_mariadb_lease_mode(options.at("lease"));
  if (settings_.galera) start_one_after_another();
}

const MariadbServer::Node& MariadbServer::node_of(const std::string& node) const {
  return configured(nodes_, node, "mariadb");
}

void MariadbServer::configure(Runtime& runtime, const std::string& node, const fs::path& dir) {
  if (mariadbd_.empty()) {
    for (const BackendInfo::Binary& binary : mariadb_backend_info().binaries) {
      auto found = find_binary(binary);
      if (!found) throw HarnessError(binary.program + " is not installed: " + os::install_hint(binary.debian_package));
      if (binary.program == "mariadbd") mariadbd_ = *found;
      if (binary.program == "mariadb-install-db") install_db_ = *found;
    }
    if (settings_.galera) {
      const GaleraProvider& galera = galera_provider();
      if (!fs::exists(galera.path)) {
        throw HarnessError(galera.path + " is not installed (cluster=galera): " + os::install_hint(galera.package));
      }
      provider_ = galera.path;
    }
  }
  MariadbMember m;
  m.name = node;
  m.address = runtime.node(node).address;
  m.port = runtime.port(node, "mariadb", 3306);
  if (settings_.galera) {
    m.group_port = runtime.port(node, "galera", 4567);
    m.ist_port = runtime.port(node, "galera-ist", 4568);
    m.sst_port = runtime.port(node, "galera-sst", 4444);
  }
  // The data directory is the run's scratch: removed at teardown, by clean after a crash.
  runtime.record_scratch(dir / "data");
  make_data_dir(runtime, node, dir);
  members_.push_back(m);
  nodes_[node] = Node{m, dir};
}

std::vector<std::string> MariadbServer::install_db_command(const fs::path& data) const {
  std::vector<std::string> argv = {install_db_,        "--no-defaults", flag("datadir", data.string()),
                                   "--auth-root-authentication-method=normal", "--skip-test-db", kRedoLogSize};
  if (as_root_) argv.push_back("--user=mysql");
  return argv;
}

void MariadbServer::make_data_dir(Runtime& runtime, const std::string& node, const fs::path& dir) {
  const fs::path data = dir / "data";
  const fs::path log = dir / "setup.log";
  // As root the server runs as mysql, which must own its directory (socket, data, SST).
  const std::string hand_over = as_root_ ? "chown mysql:mysql \"$1\" && " : "";
  fs::path kept;
  if (auto cache = reuse_dir(runtime, "mariadb")) {
    std::vector<std::string> key = install_db_command("data");
    key.push_back(kRootFromAnywhere);
    key.push_back("euid " + std::to_string(::geteuid()));
    if (const passwd* pw = as_root_ ? ::getpwnam("mysql") : nullptr) {
      key.push_back("mysql " + std::to_string(pw->pw_uid) + ":" + std::to_string(pw->pw_gid));
    }
    kept = *cache / ("datadir-" + fingerprint(key, {mariadbd_, install_db_}));
    std::error_code ec;
    if (fs::is_directory(kept / "data" / "mysql", ec)) {
      try {
        runtime.run_to_end({node, "copy of the kept data directory",
                            {"sh", "-c", hand_over + "cp -a -- \"$2\" \"$3\"", "sh", dir.string(),
                             (kept / "data").string(), data.string()},
                            {}, log, {}, {}},
                           std::chrono::seconds(60));
        return;
      } catch (const HarnessError& e) {
        note_setup(log, "cannot use the kept data directory " + kept.string() + " (" + e.what() +
                            "); running mariadb-install-db instead");
        fs::remove_all(data, ec);
      }
    }
  }
  std::vector<std::string> argv = {"sh", "-c", hand_over + "shift; exec \"$@\"", "sh", dir.string()};
  for (const std::string& a : install_db_command(data)) argv.push_back(a);
  runtime.run_to_end({node, "mariadb-install-db", argv, {}, log, {}, {}}, std::chrono::seconds(60));
  // root may connect from any address of the run's network, not only from localhost: the
  // clients and the controller's probes come from other nodes. Grants cannot be given in
  // bootstrap mode, so root@localhost's row is copied.
  std::vector<std::string> grant = {"sh",      "-c",          "sql=\"$1\"; shift; printf '%s\\n' \"$sql\" | \"$@\"",
                                    "sh",      kRootFromAnywhere, mariadbd_,
                                    "--no-defaults", "--bootstrap", flag("datadir", data.string()),
                                    kRedoLogSize};
  if (as_root_) grant.push_back("--user=mysql");
  runtime.run_to_end({node, "mariadbd --bootstrap", grant, {}, log, {}, {}}, std::chrono::seconds(60));
  if (!kept.empty()) keep_for_later_runs(runtime, node, data, kept, log);
}

ProcessSpec MariadbServer::daemon(const std::string& node) const {
  const Node& n = node_of(node);
  MariadbPaths paths;
  paths.mariadbd = mariadbd_;
  paths.galera_provider = provider_;
  paths.data_dir = n.dir / "data";
  if (as_root_) paths.user = "mysql";
  std::vector<std::string> argv =
      mariadb_command_line(paths, settings_, n.member, members_, bootstrap_node_ == node);
  // Its own PID namespace: an SST's shell and rsync die with the server (see the header).
  // --mount-proc: the SST script watches its rsync daemon through /proc, which must show
  // the namespace's own pids.
  if (as_root_) argv.insert(argv.begin(), {"unshare", "--pid", "--fork", "--mount-proc", "--"});
  ProcessSpec spec;
  spec.node = node;
  spec.name = "mariadbd";
  spec.argv = std::move(argv);
  spec.log = n.dir / "mariadb.log";
  spec.cwd = n.dir;
  return spec;
}

MariadbResult MariadbServer::query(const std::string& node, const std::string& sql, milliseconds timeout) {
  const MariadbMember& m = node_of(node).member;
  const HostPort t = runtime().probe_target(node, m.address, m.port);
  MariadbResult r;
  runtime().run_in(node, [&] {
    MariadbConnectParams p;
    p.host = t.address;
    p.port = t.port;
    p.connect_timeout = p.command_timeout = timeout;
    r = MariadbConnection(std::move(p)).exec(sql);
  });
  return r;
}

bool MariadbServer::ready(Runtime& runtime, const std::string& node) {
  const MariadbMember& m = node_of(node).member;
  if (!runtime.tcp_connects(node, m.address, m.port, milliseconds(200))) return false;
  // A Galera node answers before it has joined the primary component; it is ready once it
  // accepts statements (wsrep_ready).
  MariadbResult r = query(node, settings_.galera ? "SHOW STATUS LIKE 'wsrep_ready'" : "SELECT 1", kProbeTimeout);
  if (r.status != MariadbResult::Status::kOk || r.rows.empty()) return false;
  return !settings_.galera || (r.rows[0].size() > 1 && r.rows[0][1] == "ON");
}

void MariadbServer::setup(Runtime& runtime, const fs::path& nodes_dir) {
  if (settings_.galera) bootstrap_node_ = "n1";
  try {
    DaemonServer::setup(runtime, nodes_dir);
  } catch (...) {
    bootstrap_node_.reset();
    throw;
  }
  bootstrap_node_.reset();  // a node started again later joins the others
  // On n1; Galera replicates it to the others.
  for (const std::string& sql : mariadb_schema_statements()) {
    MariadbResult r = query(nodes().front(), sql, milliseconds(10000));
    if (r.status != MariadbResult::Status::kOk) {
      throw HarnessError("mariadb on node " + nodes().front() + ": cannot create the schema: " + r.error);
    }
  }
}

void MariadbServer::teardown(const Deadline& deadline) noexcept {
  DaemonServer::teardown(deadline);
  for (const auto& [node, n] : nodes_) {
    std::error_code ec;
    fs::remove_all(n.dir / "data", ec);  // megabytes per node and run; the logs stay beside it
    if (!ec) {
      try {
        runtime().forget_scratch(n.dir / "data");
      } catch (...) {
        // clean removes it later (it is gone already, so that costs nothing)
      }
    }
  }
}

nlohmann::json MariadbServer::client_config() const {
  MariadbClientConfig c = client_;
  c.servers.clear();
  for (const std::string& node : nodes()) {
    const MariadbMember& m = node_of(node).member;
    c.servers.push_back({m.address, m.port});
  }
  return c.to_json();
}

int MariadbServer::kill_sessions(const std::string& client, const Deadline& deadline) {
  int ended = 0;
  std::string errors;
  bool asked = false;
  for (const std::string& node : answering_nodes()) {
    if (deadline.expired()) break;
    const MariadbMember& m = node_of(node).member;
    const HostPort t = runtime().probe_target(node, m.address, m.port);
    int n = -1;
    std::string error;
    runtime().run_in(node, [&] {
      MariadbConnectParams p;
      p.host = t.address;
      p.port = t.port;
      p.connect_timeout = p.command_timeout = std::max(milliseconds(1), std::min(kProbeTimeout, deadline.left()));
      MariadbConnection conn(std::move(p));
      // A node cut from the primary component refuses reads unless they may be dirty; the
      // registrations it holds are its own sessions' anyway.
      if (settings_.galera) conn.exec("SET SESSION wsrep_dirty_reads = ON");
      n = kill_client_sessions(conn, client, &error);
    });
    if (n < 0) {
      errors += (errors.empty() ? "" : "; ") + node + ": " + error;
      continue;
    }
    asked = true;
    ended += n;
  }
  if (!asked) throw HarnessError("mariadb: cannot end the sessions of " + client + ": " + (errors.empty() ? "no server runs" : errors));
  return ended;
}

}  // namespace fencecheck
