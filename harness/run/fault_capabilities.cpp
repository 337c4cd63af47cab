#include "harness/run/fault_capabilities.h"

#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {

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
