#include "nemesis/nemesis.h"
#include "nemesis/pause_nemesis.h"
#include "platform/named_registry.h"

namespace fencecheck {

const std::vector<FaultInfo>& fault_registry() {
  static const std::vector<FaultInfo> registry = {
      {"pause-holder", "pause", "SIGSTOP the client whose acquire just completed (a GC pause)",
       false, false, make_pause_nemesis},
      {"pause-client", "pause", "SIGSTOP a random client", false, false, make_pause_nemesis},
      {"pause-server", "pause", "SIGSTOP a random server", false, false, make_pause_nemesis},
  };
  return registry;
}

const FaultInfo* find_fault(std::string_view name) { return find_by_name(fault_registry(), name); }
std::string fault_names() { return names_of(fault_registry()); }

}  // namespace fencecheck
