// The LockServer role — Jepsen's DB protocols for one backend: set up its servers on
// their nodes, tear them down, and for the nemesis start, stop, kill, pause and resume a
// node's server, end a client's sessions (where the backend can) and name its log files.
//
// setup() writes each node's config into nodes_dir/<node>/, starts every server through
// the Runtime with its log beside it, and returns once every server answers its protocol;
// it throws HarnessError quoting the log tail otherwise. start() after a stop() or kill()
// starts the node again on the same data directory (what persistence kept survives) and
// waits until it answers. kill() is a crash (SIGKILL to the server's process group); its
// exit is announced to the Process first, so the controller never takes it for a failure
// of the bench. The Processes belong to the Runtime, which must outlive this object.
//
// Thread-safety: setup() and teardown() are called alone; in between, the fault families
// call start/launch/await_ready/stop/kill/pause/resume/kill_sessions/press_memory from their own threads
// (kill_sessions from a client's, on its lock event), and an implementation must keep its
// own state consistent under that (DaemonServer does), never holding a lock another node's
// action needs while it spawns or waits.
// Blocking: kill, pause, resume, stop, await_ready, kill_sessions and teardown return by the
// caller's Deadline (on every runtime); launch once the process has exec'd (under ssh: its uploads,
// bounded by the runtime's set-up step); start up to the readiness timeout; leader() one
// probe per node.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/errors.h"
#include "platform/runtime.h"

namespace fencecheck {

// What a press_memory (the memory-pressure fault) did: filler items stored and refused
// (a full cache that does not evict), and the items the server evicted meanwhile by its
// own count (nullopt when it could not say); error: why it stopped before the deadline
// (the server went away), empty otherwise.
struct MemoryPressure {
  std::int64_t stored = 0;
  std::int64_t refused = 0;
  std::optional<std::int64_t> evictions;
  std::string error;
};

class LockServer {
 public:
  virtual ~LockServer() = default;
  virtual void setup(Runtime& runtime, const std::filesystem::path& nodes_dir) = 0;
  // The nodes this backend's servers run on, e.g. {"n1"} or {"n1", …, "n5"}.
  virtual const std::vector<std::string>& nodes() const = 0;
  // What every LockClient of this backend needs to reach the servers (after setup()).
  virtual nlohmann::json client_config() const = 0;
  // The same for servers of this backend and options that someone else runs at `servers`
  // (--runtime external), in node order; needs no setup(). Throws std::invalid_argument
  // for a number of servers the backend cannot use, or a backend that cannot do this.
  virtual nlohmann::json client_config_at(const std::vector<HostPort>& servers) const;

  // Starts the node again (no-op when it runs already) and waits until it answers; throws
  // HarnessError when it does not within the backend's readiness timeout. For setup and
  // tests; a fault uses the two halves below, so that it can start several nodes before it
  // waits for any and stop waiting when the run ends.
  virtual void start(const std::string& node) = 0;
  // Spawns the node's server unless it runs already; returns once it has exec'd. Throws
  // HarnessError when it cannot be started at all (a missing program, a bad config).
  virtual void launch(const std::string& node) = 0;
  // Waits until the launched node answers its protocol: up to the backend's readiness
  // timeout or the deadline, whichever comes first; kGaveUp at once when the deadline's
  // cancel check says so (Runtime::await_ready). kTimedOut is not an error: a quorum system
  // cannot answer while faults withhold its quorum. Throws HarnessError when the server
  // exits first or was never launched.
  virtual Readiness await_ready(const std::string& node, const Deadline& deadline) = 0;
  // graceful (SIGTERM; SIGKILL once the deadline comes near)
  virtual void stop(const std::string& node, const Deadline& deadline) = 0;
  virtual void kill(const std::string& node, const Deadline& deadline) = 0;   // crash: SIGKILL, waits until gone
  // SIGSTOP, waits until stopped; throws HarnessError (and resumes it) when it did not
  // stop by the deadline: the pause must not be reported as in force.
  virtual void pause(const std::string& node, const Deadline& deadline) = 0;
  virtual void resume(const std::string& node, const Deadline& deadline) = 0;
  virtual bool running(const std::string& node) = 0;
  // The node's current server processes (empty while stopped).
  virtual std::vector<Process*> processes(const std::string& node) = 0;
  virtual std::vector<std::filesystem::path> log_files(const std::string& node) const = 0;
  // The node whose server leads now (ZooKeeper's leader, etcd's raft leader); nullopt for
  // backends without one, or during an election. BackendInfo::offers says which
  // (Capability::kNamesLeader).
  virtual std::optional<std::string> leader() { return std::nullopt; }
  // Ends every session the client node `client` ("c2") has open on the servers — the
  // server's own kill (PostgreSQL's pg_terminate_backend, MariaDB's KILL), so that its
  // session-bound locks go with them — and returns how many it ended (0: it had none).
  // Only for a backend whose BackendInfo::offers has Capability::kKillsSessions: by default
  // it throws HarnessError (the run refuses the kill-session fault before that can happen).
  // Called with every server running and not paused (the runner's ServerProcesses sees to
  // that), on the thread of the client whose grant fired it, while the others' ops go on.
  // Returns by the deadline; throws HarnessError when a server cannot be asked by then or
  // refuses.
  virtual int kill_sessions(const std::string& client, const Deadline& deadline);
  // Fills the node's server's memory with filler items until the deadline, so that it
  // evicts what it holds, lock keys included (memory-pressure), and says what happened.
  // Only for a backend whose BackendInfo::offers has Capability::kEvictsKeys with the run's
  // options: by default it throws HarnessError. Called with the server running, from the
  // fault family's thread, while the clients' ops go on; returns by the deadline (plus one
  // exchange with the server, ≤ 2 s). A server that goes away meanwhile ends it early
  // (MemoryPressure::error), which is not an error.
  virtual MemoryPressure press_memory(const std::string& node, const Deadline& deadline);

  // Stops every server, by the deadline (a silent host's is left to the runtime's
  // removal). Idempotent; never throws.
  virtual void teardown(const Deadline& deadline) noexcept = 0;
};

inline nlohmann::json LockServer::client_config_at(const std::vector<HostPort>&) const {
  throw std::invalid_argument("this backend cannot be tested against servers it does not start yet");
}

inline int LockServer::kill_sessions(const std::string& client, const Deadline&) {
  throw HarnessError("this backend cannot end the sessions of " + client + " on its servers");
}

inline MemoryPressure LockServer::press_memory(const std::string& node, const Deadline&) {
  throw HarnessError("this backend cannot fill the memory of its server on " + node);
}

}  // namespace fencecheck
