// Process supervision: every server, worker and the resource service of a run is a child
// started here, on a node, in its own process group, with stdout and stderr appended to a
// log file, and with PR_SET_PDEATHSIG(SIGKILL) so that it dies if the controller is
// killed. Each process group is recorded in the RunState before the child runs.
//
// Thread-safe: the nemesis pauses and kills processes while the runner spawns others.
// The Supervisor owns its Process objects; references stay valid until it is destroyed.
// Errors throw RuntimeError (runtime.h) quoting the tail of the process's log.
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

#include "harness/runtime/runtime.h"

namespace fencecheck {

struct ProcessSpec {
  std::string node;                          // node to run on (its netns under netns)
  std::string name;                          // "redis-server", "worker", … for messages
  std::vector<std::string> argv;             // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;    // added to the controller's environment
  std::filesystem::path log;                 // stdout+stderr, appended
  std::filesystem::path cwd;                 // empty: inherit
};

class Process {
 public:
  virtual ~Process() = default;
  virtual const ProcessSpec& spec() const = 0;
  virtual int pid() const = 0;  // also the process group id
  virtual bool alive() = 0;     // reaps the child if it exited
  virtual std::optional<int> exit_status() = 0;  // raw wait status once exited
  // Sends sig to the whole process group (SIGSTOP/SIGCONT for pauses, SIGKILL for crashes).
  virtual void signal(int sig) = 0;
  // SIGCONT + SIGTERM to the group, waits up to grace, then SIGKILL; reaps. Idempotent.
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

  // Starts the process. Throws RuntimeError if the binary cannot be run.
  Process& spawn(const ProcessSpec& spec);

  // Polls ready() (every 50 ms) until it returns true. Throws RuntimeError quoting the
  // log tail if the process exits first or the timeout passes.
  void wait_ready(Process& p, const std::function<bool()>& ready,
                  std::chrono::milliseconds timeout);

  // True if a TCP connection to address:port from `node` succeeds within timeout.
  bool tcp_connects(std::string_view node, const std::string& address, std::uint16_t port,
                    std::chrono::milliseconds timeout) const;

  // Stops every process, most recently started first.
  void stop_all(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck
