#include "backends/postgres/process_tree.h"

#include <signal.h>

#include <thread>

#include "platform/proc_stat.h"

namespace fencecheck::pgproc {
namespace {

using Clock = std::chrono::steady_clock;

bool is_current(const ProcId& p) { return os::process_is(p.pid, p.start_time); }

template <typename Done>
bool wait_all(const std::vector<ProcId>& procs, std::chrono::milliseconds timeout, Done done) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (const ProcId& p : procs) all = all && (!is_current(p) || done(p));
    if (all) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

std::vector<ProcId> descendants(int pid) {
  std::vector<ProcId> out;
  for (const os::ProcStat& s : os::descendants_of(pid)) out.push_back({s.pid, s.start_time});
  return out;
}

void signal_all(const std::vector<ProcId>& procs, int sig) {
  for (const ProcId& p : procs) {
    if (is_current(p)) ::kill(p.pid, sig);
  }
}

bool wait_all_stopped(const std::vector<ProcId>& procs, std::chrono::milliseconds timeout) {
  return wait_all(procs, timeout, [](const ProcId& p) {
    return os::is_halted_state(os::process_state(p.pid));
  });
}

bool wait_all_gone(const std::vector<ProcId>& procs, std::chrono::milliseconds timeout) {
  return wait_all(procs, timeout, [](const ProcId& p) {
    char state = os::process_state(p.pid);
    return state == 'Z' || state == 'X' || state == '\0';
  });
}

}  // namespace fencecheck::pgproc
