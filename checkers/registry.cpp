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

namespace {

OptionSpec checker_option(std::string name, OptionType type, nlohmann::json default_value, std::string unit,
                          std::string help) {
  return declare_option(std::move(name), OptionReader::kChecker, type, std::move(default_value), std::move(unit),
                        std::move(help));
}

}  // namespace

const std::vector<CheckerOption>& checker_options() {
  static const std::vector<CheckerOption> options = [] {
    const CheckOptions defaults;
    OptionSpec model = checker_option("model", OptionType::kText, defaults.model, "",
                                      "linearizable: the model (default: chosen from the history)");
    model.allowed = model_name_list();
    OptionSpec time = checker_option("linear-time-limit", OptionType::kNumber, defaults.time_limit_s, "s",
                                     "linearizable: seconds of search before the verdict is unknown");
    time.check_alias = "time-limit";
    time.min = 0;
    time.min_exclusive = true;
    OptionSpec memory =
        checker_option("linear-memory-limit", OptionType::kBytes, defaults.memory_limit_bytes, "bytes",
                       "linearizable: memory for the search before the verdict is unknown (e.g. 512M, 2G)");
    memory.check_alias = "memory-limit";
    memory.min = 1;
    return std::vector<CheckerOption>{
        {model, [](const nlohmann::json& v, CheckOptions& o) { o.model = v.get<std::string>(); }},
        {time, [](const nlohmann::json& v, CheckOptions& o) { o.time_limit_s = v.get<double>(); }},
        {memory, [](const nlohmann::json& v, CheckOptions& o) { o.memory_limit_bytes = v.get<std::size_t>(); }},
    };
  }();
  return options;
}

std::vector<OptionSpec> checker_option_specs() {
  std::vector<OptionSpec> specs;
  for (const auto& o : checker_options()) specs.push_back(o.spec);
  return specs;
}

CheckOptions check_options(const OptionValues& values, CheckOptions base) {
  for (const auto& o : checker_options()) {
    if (values.has(o.spec.name)) o.apply(values.at(o.spec.name), base);
  }
  return base;
}

const CheckerInfo* find_checker(std::string_view name) { return find_by_name(checker_registry(), name); }
std::string checker_names() { return names_of(checker_registry()); }

}  // namespace fencecheck
