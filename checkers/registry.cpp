#include "checkers/registry.h"

#include <algorithm>

#include "checkers/linear/linearizable_checker.h"
#include "checkers/safety.h"
#include "platform/named_registry.h"

namespace fencecheck {
namespace {

// The ops a checker judges (docs/checkers.md): the lock ops its rule is about, every op
// that runs on the resource (whose log it reads), or every op.
bool is_lock_grant_or_release(OpFn f) { return f == OpFn::kAcquire || f == OpFn::kRelease; }
bool runs_on_resource(OpFn f) { return op_spec(f).runs_at == OpPlace::kResource; }
bool any_op(OpFn) { return true; }

}  // namespace

const std::vector<CheckerInfo>& checker_registry() {
  static const std::vector<CheckerInfo> registry = {
      {"exclusion", "holds of one lock by different processes never overlap", make_exclusion_checker,
       is_lock_grant_or_release},
      {"tokens", "fencing tokens are unique and increase with real time", make_tokens_checker,
       is_lock_grant_or_release},
      {"resource", "no stale token accepted, no lost update, no failed write visible",
       make_resource_checker, runs_on_resource},
      {"linearizable", "per key, the history is linearizable against a lock or register model",
       make_linearizable_checker, any_op},
  };
  return registry;
}

std::vector<std::string> checkers_for(const std::vector<OpFn>& ops) {
  std::vector<std::string> names;
  for (const CheckerInfo& c : checker_registry()) {
    if (std::any_of(ops.begin(), ops.end(), c.judges)) names.push_back(c.name);
  }
  return names;
}

const CheckerInfo* find_checker(std::string_view name) { return find_by_name(checker_registry(), name); }
std::string checker_names() { return names_of(checker_registry()); }

}  // namespace fencecheck
