// Start (clone or fork, then exec) of one supervised child. Internal to platform/.
//
// A child shares the controller's memory until it execs (clone with CLONE_VM |
// CLONE_VFORK, as posix_spawn does), so a start costs no copy of the controller's page
// tables; only a child born into another PID namespace (docker) is forked, since the
// kernel refuses shared memory across PID namespaces.
//
// Why not Boost.Process (which the design names): every child must, between fork and
// exec, set PR_SET_PDEATHSIG and re-check its parent, enter the node's network namespace,
// lead its own process group, and wait until the controller has recorded that group in the
// RunState; and a failed exec must come back naming the binary and the step that failed.
// Boost.Process v1 (Boost 1.74) can host the child-side steps (extend::on_exec_setup), but
// it reports exec failures as a bare "execve failed", reaps through its own child object
// (which terminates the child when destroyed), and the record-before-exec handshake would
// be split across three handler types. Plain clone/exec keeps every step visible here, and
// reaping stays with Process (supervisor.cpp), which waits with WNOWAIT so the group id
// stays reserved until the whole group is killed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "platform/process.h"

namespace fencecheck {

class RunState;

// How a child enters its node before it execs. local: nothing. netns: the node's network
// namespace. docker: the container's namespaces and cgroups, which is what `docker exec`
// does, done here so that the process stays the controller's child (signals, exit status,
// PR_SET_PDEATHSIG) instead of dockerd's.
struct NodeEntry {
  // Namespace files the child joins with setns, in order: a mount namespace must come
  // last, since host paths are gone after it.
  std::vector<std::string> namespaces;
  // cgroup directories (as the controller sees them) the child is moved into before it
  // may exec, so that a container's freezer and accounting cover it.
  std::vector<std::filesystem::path> cgroups;
  // The node's file system as the controller sees it (/proc/<pid>/root of a container):
  // argv[0] is looked up there. Empty: the controller's own.
  std::filesystem::path root;
  // A PID namespace file (/proc/<pid>/ns/pid of a container): the child is forked into it,
  // still the controller's direct child, so that /proc/self inside the node means it.
  std::string pid_namespace;
};

// Starts spec as a child leading its own process group and returns its pid. The group is
// recorded in state after the fork and before the child may exec (and forgotten again if
// the start fails). Throws HarnessError naming the binary and the failed step if it cannot
// be started. Must run on a thread that lives as long as the child should:
// PR_SET_PDEATHSIG fires when the forking thread exits.
int launch_child(const ProcessSpec& spec, const NodeEntry& entry, RunState& state);

}  // namespace fencecheck
