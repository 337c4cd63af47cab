#include "platform/named_registry.h"
#include "nemesis/nemesis.h"
#include "nemesis/pause_nemesis.h"

namespace fencecheck {

const std::vector<FaultInfo>& fault_registry() {
  static const std::vector<FaultInfo> registry = {
      {"pause-holder", "pause", "SIGSTOP the client whose acquire just completed (a GC pause)", false},
      {"pause-client", "pause", "SIGSTOP a random client", false},
      {"pause-server", "pause", "SIGSTOP a random server", false},
  };
  return registry;
}

const FaultInfo* find_fault(std::string_view name) { return find_by_name(fault_registry(), name); }
std::string fault_names() { return names_of(fault_registry()); }

std::unique_ptr<Nemesis> make_nemesis(const std::string& nemesis_name, NemesisEnv& env,
                                      const NemesisOptions& options) {
  if (nemesis_name == "pause") return std::make_unique<PauseNemesis>(env, options);
  return nullptr;
}

}  // namespace fencecheck
