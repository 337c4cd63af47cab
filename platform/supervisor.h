// Process supervision: every server, worker and the resource service of a run is a child
// started here, on a node (inside its network namespace under netns), in its own process
// group, stdin /dev/null, stdout and stderr appended to a log file, and with
// PR_SET_PDEATHSIG(SIGKILL) so that it dies if the controller is killed. Each process group
// is recorded in the RunState before the child may exec, and forgotten once stopped.
//
// Thread-safe: the nemesis pauses and kills processes while the runner spawns others; any
// thread may call spawn. (PDEATHSIG fires when the forking *thread* exits, so all forks
// happen on one internal thread that lives as long as the Supervisor.) Grandchildren do not
// inherit PDEATHSIG: after a controller crash they are left to `fencecheck clean`, which
// kills whole recorded groups.
//
// Ownership and order: the Supervisor owns its Process objects; references stay valid
// until it is destroyed. Destroy (or stop_all) the Supervisor before Runtime::destroy()
// and before the RunState; both must outlive it.
// Errors throw HarnessError (runtime.h): spawn names the binary and the failed step,
// wait_ready quotes the tail of the process's log.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "platform/runtime.h"

namespace fencecheck {

struct ProcessSpec {
  std::string node;                          // node to run on (its netns under netns)
  std::string name;                          // "redis-server", "worker", … for messages
  std::vector<std::string> argv;             // argv[0] is looked up in PATH (or a path)
  std::map<std::string, std::string> env;    // added to the controller's environment
  std::filesystem::path log;                 // required; stdout+stderr, appended; parent
                                             // directories are created
  std::filesystem::path cwd;                 // empty: inherit
};

class Process {
 public:
  virtual ~Process() = default;
  virtual const ProcessSpec& spec() const = 0;
  virtual int pid() const = 0;  // also the process group id
  // False once the leader exited. It is reaped only by stop(): until then its zombie keeps
  // the group id from being reused, so signal() can never hit a stranger.
  virtual bool alive() = 0;
  virtual std::optional<int> exit_status() = 0;  // raw wait status once exited
  // Sends sig to the whole process group (SIGSTOP/SIGCONT for pauses, SIGKILL for crashes).
  // A no-op after stop().
  virtual void signal(int sig) = 0;
  // SIGCONT + SIGTERM to the group, waits up to grace for the leader, then SIGKILL to the
  // group (grandchildren included); reaps and removes the group from the RunState.
  // Idempotent; does not block signal() while it waits.
  virtual void stop(std::chrono::milliseconds grace) = 0;
  // The last `lines` lines of the log, for error messages.
  virtual std::string log_tail(std::size_t lines = 20) const = 0;
};

class Supervisor {
 public:
  Supervisor(Runtime& runtime, RunState& state);
  ~Supervisor();  // stops every process still alive
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts the process; returns once it has exec'd. Throws HarnessError for an unknown
  // node, a binary not in PATH, or any failed start-up step (naming binary and step).
  Process& spawn(const ProcessSpec& spec);

  // Polls ready() (every 50 ms) until it returns true. Throws HarnessError quoting the
  // log tail if the process exits first or the timeout passes.
  void wait_ready(Process& p, const std::function<bool()>& ready,
                  std::chrono::milliseconds timeout);

  // True if a TCP connection to address:port (IPv4 dotted quad) from inside `node`'s
  // network succeeds within timeout. Throws HarnessError for a bad address or node.
  bool tcp_connects(std::string_view node, const std::string& address, std::uint16_t port,
                    std::chrono::milliseconds timeout) const;

  // Stops every process, most recently started first.
  void stop_all(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck
