#include "harness/run/fault_capabilities.h"

#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {

bool ServerProcesses::pause(const std::string& node) {
  std::lock_guard lock(act_mu_);
  if (!server_.running(node)) return false;
  server_.pause(node);
  return true;
}

// Without the lock: a SIGCONT never blocks, must never wait behind a slow kill or stop of
// another family, and is harmless to a process that is being killed or was restarted.
void ServerProcesses::resume(const std::string& node) { server_.resume(node); }

bool ServerProcesses::kill(const std::string& node) {
  std::lock_guard lock(act_mu_);
  if (!server_.running(node)) return false;
  server_.kill(node);
  return true;
}

bool ServerProcesses::stop(const std::string& node) {
  std::lock_guard lock(act_mu_);
  if (!server_.running(node)) return false;
  server_.stop(node);
  return true;
}

void ServerProcesses::launch(const std::string& node) {
  std::lock_guard lock(act_mu_);
  server_.launch(node);
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

void FixedClocks::set_offset(const std::string& node, std::chrono::milliseconds) {
  throw HarnessError("cannot shift the clock of node " + node +
                     ": libfcclock.so is not beside the fencecheck binary (rebuild it)");
}

void ServerClocks::set_offset(const std::string& node, std::chrono::milliseconds offset) {
  const std::vector<Process*> servers = server_.processes(node);
  if (offset.count() != 0 && !servers.empty()) {
    bool reached = false;
    std::string members;
    for (Process* p : servers) {
      for (int pid : os::group_members(p->pid())) {
        reached = reached || clocks_.reaches(pid, node);
        members += (members.empty() ? "" : ", ") + std::to_string(pid);
      }
    }
    if (!reached) {
      throw HarnessError("cannot shift the clock of " + node + ": no process of its server (" + members +
                         ") has loaded libfcclock.so with the node's clock file, so a clock fault "
                         "there would change nothing");
    }
  }
  clocks_.set_offset(node, offset);
}

}  // namespace fencecheck
