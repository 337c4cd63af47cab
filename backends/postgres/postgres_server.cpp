#include "backends/postgres/postgres_server.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>

#include "backends/postgres/pg_connection.h"
#include "backends/postgres/postgres_backend.h"
#include "backends/postgres/process_tree.h"
#include "backends/registry.h"
#include "platform/os_util.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;
namespace fs = std::filesystem;

// A fast shutdown ends the sessions and writes a checkpoint; a tiny cluster needs well
// under a second, so this only bounds a server that hangs.
constexpr milliseconds kShutdownGrace{10000};
constexpr milliseconds kGoneTimeout{2000};

int non_negative(const BackendOptions& options, const std::string& name) {
  return static_cast<int>(option_number(options, "postgres", name, 0, std::numeric_limits<int>::max()));
}

// A postgresql.conf string literal.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

void write_file(const fs::path& path, const std::string& text, std::ios::openmode mode) {
  std::ofstream out(path, mode);
  out << text;
  out.flush();
  if (!out) throw HarnessError("postgres: cannot write " + path.string());
}

// What initdb is given besides the data directory.
const std::vector<std::string>& initdb_options() {
  static const std::vector<std::string> options = {"-U",         "postgres", "--auth=trust", "--no-sync",
                                                   "-E",         "UTF8",     "--locale=C.UTF-8"};
  return options;
}

}  // namespace

std::vector<BackendOption> postgres_option_specs() {
  return {
      {"lock",
       "lease: a lease table row with a fencing token; advisory: session advisory locks "
       "(no token, freed only when the session ends)",
       "lease",
       {"lease", "advisory"}},
      {"idle_session_timeout_ms",
       "the server ends a client session idle this long, freeing its advisory locks (0: never)",
       "0",
       {}},
      {"keepalives_idle_s", "TCP keepalive idle time of each session, both ends (0: OS default)", "0", {}},
      {"keepalives_interval_s", "TCP keepalive probe interval (0: OS default)", "0", {}},
      {"keepalives_count", "TCP keepalive probes lost before a session dies (0: OS default)", "0", {}},
  };
}

PostgresServerOptions PostgresServerOptions::from_options(const BackendOptions& options) {
  PostgresServerOptions o;
  PostgresClientConfig& c = o.client;
  for (const auto& [name, value] : options) {
    if (name == "lock") {
      c.lock = parse_lock_kind(value);
    } else if (name == "idle_session_timeout_ms") {
      c.idle_session_timeout_ms = non_negative(options, name);
    } else if (name == "keepalives_idle_s") {
      c.keepalives_idle_s = non_negative(options, name);
    } else if (name == "keepalives_interval_s") {
      c.keepalives_interval_s = non_negative(options, name);
    } else if (name == "keepalives_count") {
      c.keepalives_count = non_negative(options, name);
    } else {
      throw std::invalid_argument("unknown postgres option \"" + name + "\"");
    }
  }
  return o;
}

std::string postgres_config_text(const std::string& address, std::uint16_t port,
                                 const fs::path& socket_dir, PgSharedMemory shm) {
  std::string conf = "\n# written by fencecheck\n";
  conf += "listen_addresses = " + quoted(address) + "\n";
  conf += "port = " + std::to_string(port) + "\n";
  // Never the system's /var/run/postgresql, which another cluster may use.
  conf += "unix_socket_directories = " + quoted(socket_dir.string()) + "\n";
  // Durable commits, so that a crash-restart keeps every granted lease (initdb's --no-sync
  // only skips syncing the files it writes).
  conf += "fsync = on\nsynchronous_commit = on\nfull_page_writes = on\n";
  // Never /dev/shm, which nothing of the run owns and which a SIGKILLed server leaves full.
  conf += std::string("dynamic_shared_memory_type = ") +
          (shm == PgSharedMemory::kPrivateIpc ? "sysv" : "mmap") + "\n";
  conf += "logging_collector = off\n";  // stderr, which the Runtime appends to the node's log
  conf += "log_connections = on\nlog_disconnections = on\n";
  conf += "log_line_prefix = '%m [%p] %q%a '\n";  // application_name: the client's node
  return conf;
}

std::string postgres_hba_text(const std::string& address) {
  std::string hba = "# written by fencecheck: the run's private network is trusted\n";
  hba += "local all all trust\n";
  hba += "host all all 127.0.0.1/32 trust\n";
  if (address.rfind("127.", 0) != 0) {
    std::string subnet = address.substr(0, address.rfind('.')) + ".0/24";
    hba += "host all all " + subnet + " trust\n";
  }
  return hba;
}

PostgresServer::PostgresServer(PostgresServerOptions options)
    : DaemonServer({"n1"}, options.ready_timeout), options_(std::move(options)), as_root_(::geteuid() == 0) {}

const PostgresServer::Endpoint& PostgresServer::endpoint(const std::string& node) const {
  return configured(endpoints_, node, "postgres");
}

Process* PostgresServer::leader(const std::string& node) {
  std::vector<Process*> ps = processes(node);
  return ps.empty() ? nullptr : ps.front();
}

std::vector<std::string> PostgresServer::as_postgres(std::vector<std::string> argv) const {
  if (!as_root_) return argv;
  // setpriv execs (runuser would stay behind as the parent); --pdeathsig re-arms the
  // parent-death signal that changing the uid clears.
  std::vector<std::string> wrapped = {"setpriv", "--reuid=postgres", "--regid=postgres",
                                      "--init-groups", "--pdeathsig=KILL", "--"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

void PostgresServer::configure(Runtime& runtime, const std::string& node, const fs::path& dir) {
  Endpoint e{runtime.node(node).address, runtime.port(node, "postgres", 5432), dir};
  if (bin_dir_.empty()) {
    const BackendInfo::Binary& binary = postgres_server_binary();
    auto postgres = find_binary(binary);
    if (!postgres) throw HarnessError("postgres is not installed: " + os::install_hint(binary.debian_package));
    bin_dir_ = fs::path(*postgres).parent_path();  // initdb of the same version
  }
  const fs::path data = dir / "data";
  // initdb makes the same cluster at every run: the first run keeps a pristine copy, and
  // later ones copy that instead (a tenth of initdb's time). Fresh either way: nothing a
  // run does goes back into the kept copy.
  fs::path kept;  // where the cluster of this initdb is kept; empty without a cache
  if (auto cache = reuse_dir(runtime, "postgres")) {
    kept = *cache / ("cluster-" + fingerprint(initdb_key(), {bin_dir_ / "initdb", bin_dir_ / "postgres"}));
  }
  copied_from_.clear();
  if (!kept.empty() && copy_kept_cluster(runtime, node, kept / "data", dir)) {
    copied_from_ = kept;
  } else {
    // Both steps run on the node (in its container under docker, where the user postgres
    // may have another uid than on the host).
    if (as_root_) {
      runtime.run_to_end({node, "chown", {"chown", "postgres:postgres", dir.string()}, {}, dir / "setup.log", {}, {}},
                         std::chrono::seconds(10));
    }
    std::vector<std::string> initdb = {(bin_dir_ / "initdb").string(), "-D", data.string()};
    initdb.insert(initdb.end(), initdb_options().begin(), initdb_options().end());
    try {
      runtime.run_to_end({node, "initdb", as_postgres(initdb), {}, dir / "setup.log", {}, {}}, std::chrono::seconds(60));
    } catch (const HarnessError& e) {
      throw HarnessError(std::string(e.what()) +
                         (as_root_ ? "\n(initdb runs as user postgres, who must be able to traverse every parent of " +
                                         dir.string() + ": give --store a directory it can reach, e.g. under /tmp, "
                                         "or make the parents 0755)"
                                   : ""));
    }
    if (!kept.empty()) keep_for_later_runs(runtime, node, data, kept, dir / "setup.log");
  }
  // The socket path must fit in sun_path; a long store path gets TCP alone.
  fs::path socket_dir = (dir / (".s.PGSQL." + std::to_string(e.port))).string().size() < 100 ? dir : fs::path();
  const PgSharedMemory shm = as_root_ ? PgSharedMemory::kPrivateIpc : PgSharedMemory::kDataDir;
  write_file(data / "postgresql.conf", postgres_config_text(e.address, e.port, socket_dir, shm), std::ios::app);
  write_file(data / "pg_hba.conf", postgres_hba_text(e.address), std::ios::trunc);
  endpoints_[node] = e;
}

std::vector<std::string> PostgresServer::initdb_key() const {
  std::vector<std::string> key = initdb_options();
  // The files' owner: this user, or (as root) the user postgres as the node knows it now.
  key.push_back("euid " + std::to_string(::geteuid()));
  if (as_root_) {
    if (const passwd* pw = ::getpwnam("postgres")) {
      key.push_back("postgres " + std::to_string(pw->pw_uid) + ":" + std::to_string(pw->pw_gid));
    }
  }
  return key;
}

bool PostgresServer::copy_kept_cluster(Runtime& runtime, const std::string& node, const fs::path& from,
                                       const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(from / "PG_VERSION", ec)) return false;
  const fs::path data = dir / "data";
  const fs::path log = dir / "setup.log";
  // cp -a keeps owner and modes (postgres, 0700), which the server checks. As root, one
  // process does what the initdb path does in two (each costs 50 ms or more: the runtime
  // polls for its end): hand dir to postgres, copy, and check that postgres can reach the
  // copy — when it cannot, the initdb path fails saying why.
  std::vector<std::string> argv = {"cp", "-a", "--", from.string(), data.string()};
  if (as_root_) {
    argv = {"sh", "-c",
            "chown postgres:postgres \"$1\" && cp -a -- \"$2\" \"$3\" && "
            "setpriv --reuid=postgres --regid=postgres --init-groups -- test -w \"$3\"",
            "sh", dir.string(), from.string(), data.string()};
  }
  try {
    runtime.run_to_end({node, "copy of the kept cluster", argv, {}, log, {}, {}}, std::chrono::seconds(60));
    return true;
  } catch (const HarnessError& e) {
    note_setup(log, "cannot use the kept cluster " + from.string() + " (" + e.what() + "); running initdb instead");
    fs::remove_all(data, ec);
    return false;
  }
}

ProcessSpec PostgresServer::daemon(const std::string& node) const {
  const Endpoint& e = endpoint(node);
  std::vector<std::string> server = as_postgres({(bin_dir_ / "postgres").string(), "-D", (e.dir / "data").string()});
  // --ipc: the server's SysV segments die with its last process (see the header).
  if (as_root_) server.insert(server.begin(), {"unshare", "--pid", "--ipc", "--fork", "--"});
  ProcessSpec spec;
  spec.node = node;
  spec.name = "postgres";
  spec.argv = std::move(server);
  spec.log = e.dir / "postgres.log";
  spec.cwd = e.dir;
  return spec;
}

bool PostgresServer::ready(Runtime& runtime, const std::string& node) {
  const Endpoint& e = endpoint(node);
  return port_answers(runtime, node, e.address, e.port,
                      [](const HostPort& t) { return pg_ping(t.address, t.port, milliseconds(1000)); });
}

void PostgresServer::setup(Runtime& runtime, const fs::path& nodes_dir) {
  try {
    DaemonServer::setup(runtime, nodes_dir);
  } catch (const HarnessError& e) {
    if (copied_from_.empty()) throw;
    throw HarnessError(std::string(e.what()) + "\n(its data directory is a copy of the cluster an earlier run kept in " +
                       copied_from_.string() + ": if the log shows that copy damaged, delete that directory, and the "
                       "next run makes a fresh one with initdb)");
  }
  for (const std::string& node : nodes()) {
    exec_on(node, "create the lease table", milliseconds(10000), milliseconds(10000), lease_table_ddl(), {});
  }
}

nlohmann::json PostgresServer::client_config() const {
  const Endpoint& e = endpoint(nodes().front());
  PostgresClientConfig c = options_.client;
  c.host = e.address;
  c.port = e.port;
  return c.to_json();
}

// The server's processes are this machine's (postgres runs only where the nodes share its
// kernel: netns, local, docker), so each step here is a signal and a bounded local wait.
void PostgresServer::pause(const std::string& node, const Deadline& deadline) {
  Process* p = leader(node);
  if (p == nullptr) return;
  DaemonServer::pause(node, deadline);  // first the postmaster, so that it forks nobody new
  auto children = pgproc::descendants(p->pid());
  pgproc::signal_all(children, SIGSTOP);
  pgproc::wait_all_stopped(children, std::min(milliseconds(1000), deadline.left()));
}

void PostgresServer::resume(const std::string& node, const Deadline& deadline) {
  Process* p = leader(node);
  if (p == nullptr) return;
  pgproc::signal_all(pgproc::descendants(p->pid()), SIGCONT);
  DaemonServer::resume(node, deadline);
}

void PostgresServer::kill(const std::string& node, const Deadline& deadline) {
  Process* p = leader(node);
  if (p == nullptr) return;
  p->pause(deadline);  // a frozen postmaster cannot fork while its children are gathered
  auto children = pgproc::descendants(p->pid());
  pgproc::signal_all(children, SIGKILL);
  DaemonServer::kill(node, deadline);
  // A child left alive would keep the shared memory attached and the next start would
  // refuse the data directory.
  if (!pgproc::wait_all_gone(children, kGoneTimeout)) {
    throw HarnessError("postgres on node " + node + ": server processes survived SIGKILL");
  }
}

void PostgresServer::stop(const std::string& node, const Deadline& deadline) {
  Process* p = leader(node);
  if (p == nullptr) return;
  auto children = pgproc::descendants(p->pid());
  pgproc::signal_all(children, SIGCONT);  // a stopped backend cannot end its session
  p->resume(deadline);
  // The postmaster is the leader itself, or under unshare the leader's only child. SIGTERM
  // would be a smart shutdown, which waits for every client to disconnect.
  int postmaster = as_root_ ? (children.empty() ? 0 : children.front().pid) : p->pid();
  if (postmaster > 0) ::kill(postmaster, SIGINT);
  const Deadline shutdown = deadline.within(grace_within(deadline, kShutdownGrace));
  while (p->alive() && !shutdown.expired()) std::this_thread::sleep_for(milliseconds(10));
  DaemonServer::stop(node, deadline);
  pgproc::signal_all(children, SIGKILL);  // whatever a hung shutdown left behind
  pgproc::wait_all_gone(children, kGoneTimeout);
}

void PostgresServer::teardown(const Deadline& deadline) noexcept {
  for (const std::string& node : nodes()) {
    try {
      stop(node, deadline);
    } catch (...) {
      // DaemonServer::teardown below still stops the process group.
    }
  }
  DaemonServer::teardown(deadline);
}

}  // namespace fencecheck
