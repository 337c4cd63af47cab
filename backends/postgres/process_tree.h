// The processes below a postmaster, which signals to its process group do not reach: every
// postmaster child (each session's backend, the checkpointer, …) calls setsid() and leads a
// group of its own. The postgres server uses these to pause, crash and stop all of them.
//
// A process is named by pid and start time, so that a pid reused after an exit is never
// signalled. Thread-safe (reads /proc only).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace fencecheck::pgproc {

struct ProcId {
  int pid = 0;
  std::uint64_t start_time = 0;
};

// Every live descendant of pid (children, their children, …), parents before children.
std::vector<ProcId> descendants(int pid);

// Sends sig to each process that is still the one named.
void signal_all(const std::vector<ProcId>& procs, int sig);

// Waits until every process is stopped (SIGSTOP took effect), a zombie, or gone; true if
// all were within timeout.
bool wait_all_stopped(const std::vector<ProcId>& procs, std::chrono::milliseconds timeout);

// Waits until every process is a zombie or gone; true if all were within timeout.
bool wait_all_gone(const std::vector<ProcId>& procs, std::chrono::milliseconds timeout);

}  // namespace fencecheck::pgproc
