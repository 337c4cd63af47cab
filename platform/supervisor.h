// Process supervision behind Runtime::spawn. Internal to platform/: other folders use
// runtime.h and process.h.
//
// Every child is started on a node (inside its network namespace under netns), in its own
// process group, stdin /dev/null, stdout and stderr appended to a log file, and with
// PR_SET_PDEATHSIG(SIGKILL) so that it dies if the controller is killed. Each process
// group is recorded in the RunState before the child may exec, and forgotten once stopped.
//
// Thread-safe: the nemesis pauses and kills processes while the runner spawns others.
// PDEATHSIG fires when the forking *thread* exits, so all forks happen on one internal
// thread that lives as long as the Supervisor. Grandchildren do not inherit PDEATHSIG:
// after a controller crash they are left to `fencecheck clean`, which kills whole groups.
//
// The Supervisor owns its Process objects; destroy (or stop_all) it before the network
// and the RunState go.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "platform/launch.h"
#include "platform/process.h"
#include "platform/runtime.h"

namespace fencecheck {

class Supervisor {
 public:
  explicit Supervisor(RunState& state);
  ~Supervisor();  // stops every process still alive
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts spec on its node, entering it as entry says (launch.h).
  Process& spawn(const ProcessSpec& spec, const NodeEntry& entry);
  // Runtime::await_ready without the runtime's own interrupt check.
  Readiness await_ready(Process& p, const std::function<bool()>& ready, const Deadline& deadline);
  std::vector<Process*> processes() const;
  void stop_all(std::chrono::milliseconds grace);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck
