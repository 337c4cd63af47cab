// The server side of the `postgres` backend: one PostgreSQL server on node n1 (a
// DaemonServer), a fresh cluster per run made by initdb in the node's directory.
//
// Kept cluster. initdb makes the same cluster at every run and takes a second or more. So
// under the local and netns runtimes (whose nodes run this machine's programs on its files)
// the first run keeps a pristine copy of what initdb made, before any configuration, in
// DaemonServer::reuse_dir("postgres") (cluster-<key>/data; other programs, options or owner
// make another key), and later runs copy that into the node's directory with cp -a instead
// (about a tenth of the time). Each run still gets a fresh cluster of its own: nothing a run
// does goes back into the kept copy. A copy that fails falls back to initdb; under docker
// and ssh, or without a cache, every run runs initdb.
//
// As root, initdb and the server run as the user postgres (PostgreSQL refuses root), so the
// node directory is handed to postgres and its parents must be traversable by it. The
// server runs in the foreground, not through pg_ctl, which would daemonize away from the
// Runtime, and as the first process of its own PID namespace: `unshare --pid` then
// `setpriv` to postgres. Every postmaster child calls setsid(), so the process group the
// Runtime signals holds only the postmaster; the PID namespace makes its death kill every
// child too (SIGKILL, a dead controller through PDEATHSIG, `fencecheck clean`), even
// stopped ones. pause() and stop() reach the children by walking the process tree, so a
// paused server answers nobody, not even its open sessions. Without root the server runs
// as the calling user, without a PID namespace.
//
// Shared memory. PostgreSQL keeps a SysV segment (its interlock) and dynamic segments
// (/dev/shm/PostgreSQL.* by default) that outlive a postmaster killed with SIGKILL, so a
// crashed run, or a server killed and never restarted, used to leave them behind. As root
// the server also gets its own IPC namespace (`unshare --ipc`) and its dynamic segments are
// SysV too (dynamic_shared_memory_type = sysv): every segment of the server then lives in
// a namespace that the kernel destroys, segments and all, when the last server process
// dies — however it dies, and with no record to keep or to trust. Nothing of another
// cluster's can be touched, and clean needs no knowledge of PostgreSQL: killing the run's
// process groups is enough. Without root (no IPC namespace) the dynamic segments are
// files in the data directory (dynamic_shared_memory_type = mmap), which belongs to the
// run; only the interlock segment (a header of about a hundred bytes) can then be left by
// a crash, and PostgreSQL itself removes it at the next start on the same directory.
//
// Options (--backend-opt): `lock` (lease, the default, or advisory: which lock client runs)
// and the session settings the clients pass at connect: idle_session_timeout_ms,
// keepalives_idle_s, keepalives_interval_s, keepalives_count (0: off / the OS default).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/daemon_server.h"
#include "backends/postgres/postgres_lock_client.h"
#include "backends/registry.h"

namespace fencecheck {

struct PostgresServerOptions {
  // The lock kind and session settings every client gets; the server fills in host and port.
  PostgresClientConfig client;
  // initdb is not part of it; a start after a crash includes recovery.
  std::chrono::milliseconds ready_timeout{30000};
  // From resolved backend options. Throws std::invalid_argument for a bad value.
  static PostgresServerOptions from_options(const BackendOptions& options);
};

std::vector<BackendOption> postgres_option_specs();

// Where the server's dynamic shared memory goes (see above): SysV segments in the
// server's own IPC namespace, or files in its data directory.
enum class PgSharedMemory { kPrivateIpc, kDataDir };

// The lines fencecheck appends to postgresql.conf for a server bound to address:port with
// its Unix socket in socket_dir (none when socket_dir is empty).
std::string postgres_config_text(const std::string& address, std::uint16_t port,
                                 const std::filesystem::path& socket_dir, PgSharedMemory shm);
// pg_hba.conf: trust for the node's own /24 (the run's private network) and for 127.0.0.1.
std::string postgres_hba_text(const std::string& address);

class PostgresServer : public DaemonServer {
 public:
  explicit PostgresServer(PostgresServerOptions options);

  // DaemonServer's setup, then the lease table.
  void setup(Runtime& runtime, const std::filesystem::path& nodes_dir) override;
  // PostgresClientConfig of the options, aimed at n1.
  nlohmann::json client_config() const override;

  // fast shutdown (SIGINT), then as DaemonServer
  void stop(const std::string& node, const Deadline& deadline) override;
  void kill(const std::string& node, const Deadline& deadline) override;   // the postmaster and every child
  void pause(const std::string& node, const Deadline& deadline) override;  // the postmaster and every child
  void resume(const std::string& node, const Deadline& deadline) override;
  // pg_terminate_backend of every session named after the client node (the lock clients'
  // application_name); each backend exits, its advisory locks with it, within milliseconds
  // of the return. By the deadline (half to connect, half for the statement).
  int kill_sessions(const std::string& client, const Deadline& deadline) override;
  void teardown(const Deadline& deadline) noexcept override;

 protected:
  void configure(Runtime& runtime, const std::string& node,
                 const std::filesystem::path& dir) override;
  ProcessSpec daemon(const std::string& node) const override;
  bool ready(Runtime& runtime, const std::string& node) override;

 private:
  struct Endpoint {
    std::string address;
    std::uint16_t port = 0;
    std::filesystem::path dir;
  };
  const Endpoint& endpoint(const std::string& node) const;
  // Runs one statement on node's server, from inside the node's network, as the superuser
  // in a session of its own: at most connect + command. Throws HarnessError "cannot <what>"
  // with the server's error unless it ran.
  PgExecResult exec_on(const std::string& node, const std::string& what, std::chrono::milliseconds connect,
                       std::chrono::milliseconds command, const std::string& sql,
                       const std::vector<std::string>& params);
  Process* leader(const std::string& node);  // the spawned process; nullptr when stopped
  // argv run as the user postgres when we are root; unchanged otherwise.
  std::vector<std::string> as_postgres(std::vector<std::string> argv) const;
  // What the cluster initdb makes depends on, besides its programs: options and owner.
  std::vector<std::string> initdb_key() const;
  // Copies the kept cluster `from` to dir/data on node, as root handing dir to postgres
  // first (one process; ≤ 60 s; Interrupted on the runtime's interrupt check). False, with
  // dir/data removed and a line in dir/setup.log, when there is none, the copy failed, or
  // postgres cannot reach it: the caller then takes the initdb path.
  bool copy_kept_cluster(Runtime& runtime, const std::string& node, const std::filesystem::path& from,
                         const std::filesystem::path& dir);

  PostgresServerOptions options_;
  bool as_root_;
  std::filesystem::path bin_dir_;  // where postgres and initdb are, found at configure
  std::map<std::string, Endpoint> endpoints_;
  std::filesystem::path copied_from_;  // the kept cluster the data directory copies; empty: initdb's
};

}  // namespace fencecheck
