#include "checkers/registry.h"

#include "checkers/linear/linearizable_checker.h"
#include "checkers/safety.h"
#include "platform/named_registry.h"

namespace fencecheck {

const std::vector<CheckerInfo>& checker_registry() {
  static const std::vector<CheckerInfo> registry = {
      {"exclusion", "holds of one lock by different processes never overlap", make_exclusion_checker},
      {"tokens", "fencing tokens are unique and increase with real time", make_tokens_checker},
      {"resource", "no stale token accepted, no lost update, no failed write visible",
       make_resource_checker},
      {"linearizable", "per key, the history is linearizable against a lock or register model",
       make_linearizable_checker},
  };
  return registry;
}

const CheckerInfo* find_checker(std::string_view name) { return find_by_name(checker_registry(), name); }
std::string checker_names() { return names_of(checker_registry()); }

}  // namespace fencecheck
