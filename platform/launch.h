// fork + exec of one supervised child. Internal to platform/.
//
// Why not Boost.Process (which the design names): every child must, between fork and
// exec, set PR_SET_PDEATHSIG and re-check its parent, enter the node's network namespace,
// lead its own process group, and wait until the controller has recorded that group in the
// RunState; and a failed exec must come back naming the binary and the step that failed.
// Boost.Process v1 (Boost 1.74) can host the child-side steps (extend::on_exec_setup), but
// it reports exec failures as a bare "execve failed", reaps through its own child object
// (which terminates the child when destroyed), and the record-before-exec handshake would
// be split across three handler types. Plain fork/exec keeps every step visible here, and
// reaping stays with Process (supervisor.cpp), which waits with WNOWAIT so the group id
// stays reserved until the whole group is killed.
#pragma once

#include <string>

#include "platform/process.h"

namespace fencecheck {

class RunState;

// Starts spec as a child leading its own process group and returns its pid. netns_path is
// the node's /run/netns file, or empty. The group is recorded in state after the fork and
// before the child may exec (and forgotten again if the start fails). Throws HarnessError
// naming the binary and the failed step if it cannot be started. Must run on a thread that
// lives as long as the child should: PR_SET_PDEATHSIG fires when the forking thread exits.
int launch_child(const ProcessSpec& spec, const std::string& netns_path, RunState& state);

}  // namespace fencecheck
