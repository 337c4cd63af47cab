// One supervised process of a run (a server, a worker, the resource service), as
// Runtime::spawn returns it. Every process leads its own process group; signals go to the
// whole group, so a server's own children are paused and killed with it.
//
// Exits are sorted into expected and unexpected: stop(), and a kill() the caller announces
// with expect_exit() first, make an exit expected; any other exit is a failure of the
// bench, which the controller reports (a dead server that no fault killed must never let a
// run read as valid). pause() records that the stop is deliberate for the same reason.
//
// Blocking: every action that may wait takes the caller's Deadline (platform/deadline.h)
// and returns by then on every runtime — locally a signal and a short wait, under ssh one
// remote command each. stop() is bounded by its grace plus 1 s.
//
// Thread-safe. Owned by the Runtime that spawned it; references stay valid until the
// Runtime is destroyed.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "platform/deadline.h"

namespace fencecheck {

struct ProcessSpec {
  std::string node;                          // node to run on (its netns under netns)
  std::string name;                          // "worker", a server's program name… for messages
  std::vector<std::string> argv;             // argv[0]: a path, or found by os::find_executable
  std::map<std::string, std::string> env;    // added to the controller's environment
  std::filesystem::path log;                 // required; stdout+stderr, appended; parent
                                             // directories are created
  std::filesystem::path cwd;                 // empty: inherit
  std::vector<std::string> preload;          // shared objects for LD_PRELOAD, in order
  std::vector<std::filesystem::path> control_sockets = {};  // unix sockets it listens on
                                             // that the controller dials (a worker's): the
                                             // ssh runtime forwards them from the controller
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
  // "exited with code 1", "was killed by signal 9", or "is running".
  virtual std::string describe_exit() = 0;
  // Sends sig to the whole process group, by the deadline. A no-op after stop().
  virtual void signal(int sig, const Deadline& deadline) = 0;
  // SIGSTOP to the group, then waits (until the deadline) until every thread of every
  // member is stopped: a pause counts only once the process can no longer act. Returns
  // false when some thread still ran by then (one in uninterruptible sleep, or a host that
  // did not answer): the stop may then still be pending, and the caller must not report
  // the pause as in force. resume(): SIGCONT, by the deadline (locally it never waits);
  // throws HarnessError when a remote host did not take it.
  virtual bool pause(const Deadline& deadline) = 0;
  virtual void resume(const Deadline& deadline) = 0;
  // True between pause() and resume().
  virtual bool paused() const = 0;
  // Announces that the process is about to end on purpose (a crash the nemesis injects).
  virtual void expect_exit() = 0;
  virtual bool exit_expected() const = 0;
  // A crash on purpose: expect_exit(), SIGKILL to the group, then waits (until the deadline)
  // until the leader is gone and reaps it, as stop() does.
  virtual void crash(const Deadline& deadline) = 0;
  // SIGCONT + SIGTERM to the group, waits up to grace for the leader, then SIGKILL to the
  // group (grandchildren included); reaps and removes the group from the RunState. The
  // exit is expected. Returns within grace + 1 s on every runtime (a silent remote host's
  // remains are left to the run's removal there). Idempotent; does not block signal()
  // while it waits.
  virtual void stop(std::chrono::milliseconds grace) = 0;
  // The last `lines` lines of the log, for error messages.
  virtual std::string log_tail(std::size_t lines = 20) const = 0;
};

// The grace a stop() may be given so that it returns by `deadline` (it takes up to grace +
// 1 s on every runtime), at most `most`.
inline std::chrono::milliseconds grace_within(const Deadline& deadline,
                                              std::chrono::milliseconds most = std::chrono::milliseconds(2000)) {
  const std::chrono::milliseconds left = deadline.left();
  if (left <= std::chrono::milliseconds(1000)) return std::chrono::milliseconds(0);
  return std::min(most, left - std::chrono::milliseconds(1000));
}

}  // namespace fencecheck
