#include "harness/run/fault_capabilities.h"

#include <algorithm>

#include <thread>

#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {

bool ServerProcesses::pause(const std::string& node, const Deadline& deadline) {
  std::lock_guard lock(acting_.lock(node));
  if (!server_.running(node)) return false;
  server_.pause(node, deadline);
  return true;
}

// Without the lock: a SIGCONT never blocks, must never wait behind a slow kill or stop of
// another family, and is harmless to a process that is being killed or was restarted.
void ServerProcesses::resume(const std::string& node, const Deadline& deadline) { server_.resume(node, deadline); }

bool ServerProcesses::kill(const std::string& node, const Deadline& deadline) {
  std::lock_guard lock(acting_.lock(node));
  if (!server_.running(node)) return false;
  server_.kill(node, deadline);
  return true;
}

bool ServerProcesses::stop(const std::string& node, const Deadline& deadline) {
  std::lock_guard lock(acting_.lock(node));
  if (!server_.running(node)) return false;
  server_.stop(node, deadline);
  return true;
}

// The spawn is bounded by the runtime (it returns once the server exec'd).
void ServerProcesses::launch(const std::string& node, const Deadline&) {
  std::lock_guard lock(acting_.lock(node));
  server_.launch(node);
}

std::optional<int> ServerProcesses::kill_sessions(const std::string& client, const Deadline& deadline) {
  // Every server's lock, in node order (no other action holds two), each by the deadline.
  std::vector<std::unique_lock<std::mutex>> held;
  for (const std::string& node : server_.nodes()) {
    std::unique_lock lock(acting_.lock(node), std::try_to_lock);
    while (!lock.owns_lock() && !deadline.expired()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      lock.try_lock();
    }
    if (!lock.owns_lock()) return std::nullopt;  // another fault's action outlasted the deadline
    held.push_back(std::move(lock));
  }
  for (const std::string& node : server_.nodes()) {
    if (!server_.running(node)) return std::nullopt;
    for (Process* p : server_.processes(node)) {
      if (p->paused()) return std::nullopt;  // it would not answer before the pause ends
    }
  }
  return server_.kill_sessions(client, deadline);
}

// Without the node's lock: the fill lasts seconds, and a kill or pause meanwhile must not
// wait for it (the fill then ends early, or its next batch waits out its timeout).
std::optional<MemoryPressure> ServerProcesses::press_memory(const std::string& node, const Deadline& deadline) {
  if (!server_.running(node)) return std::nullopt;
  for (Process* p : server_.processes(node)) {
    if (p->paused()) return std::nullopt;
  }
  return server_.press_memory(node, deadline);
}

void HistoryFaultLog::record(const std::string& f, const nlohmann::json& value,
                             std::optional<TimeSource::Instant> planned) {
  if (!planned) {
    history_.record_nemesis(f, value);
    return;
  }
  nlohmann::json with = value;
  with["planned_ns"] =
      std::chrono::duration_cast<std::chrono::nanoseconds>(planned->time_since_epoch()).count() - t0_ns_;
  history_.record_nemesis(f, with);
}

void FixedClocks::set_offset(const std::string& node, std::chrono::milliseconds, const Deadline&) {
  throw HarnessError("cannot shift the clock of node " + node +
                     ": libfcclock.so is not beside the fencecheck binary (rebuild it)");
}

void ServerClocks::set_offset(const std::string& node, std::chrono::milliseconds offset, const Deadline& deadline) {
  // A client node's worker, and a lock library's adapter under it, are started with the
  // library (the runner's spec decorator covers every client node) and read their clock
  // all the time; only a server can be a program the library cannot reach.
  const std::vector<std::string> servers = server_.nodes();
  const bool is_server = std::find(servers.begin(), servers.end(), node) != servers.end();
  if (is_server && offset.count() != 0 && !reached(node, deadline)) {
    std::string members;
    for (Process* p : server_.processes(node)) {
      for (int pid : os::group_members(p->pid())) members += (members.empty() ? "" : ", ") + std::to_string(pid);
    }
    throw HarnessError("cannot shift the clock of " + node + ": no process of its server (" + members +
                       ") has loaded libfcclock.so with the node's clock file, so a clock fault "
                       "there would change nothing");
  }
  clocks_.set_offset(node, offset, deadline);
}

// A server restarted by another family a moment ago may not have read its clock yet (the
// library maps the file on the first clock call), so an answer of "no" is asked again for
// up to kFirstClockCall before it counts. A process seen once is remembered: a strobe sets
// offsets every few milliseconds and must not read its maps (over ssh: a remote command)
// each time.
bool ServerClocks::reached(const std::string& node, const Deadline& caller) {
  static constexpr auto kFirstClockCall = std::chrono::milliseconds(2000);
  const Deadline deadline = caller.within(kFirstClockCall);
  for (;;) {
    const std::vector<Process*> servers = server_.processes(node);
    if (servers.empty()) return true;  // down: it maps the file when it starts again
    for (Process* p : servers) {
      // A paused server cannot make its first clock call now; it reads the offset once it
      // runs, and whether it maps the file at all is checked at a later shift.
      if (p->paused()) return true;
      {
        std::lock_guard lock(mu_);
        if (seen_.contains(p)) return true;
      }
      if (runtime_.group_maps(*p, clocks_.file_path(node), deadline)) {
        std::lock_guard lock(mu_);
        seen_.insert(p);
        return true;
      }
    }
    if (deadline.expired()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace fencecheck
