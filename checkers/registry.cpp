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

const std::vector<CheckerOption>& checker_options() {
  static const std::vector<CheckerOption> options = [] {
    const CheckOptions defaults;
    OptionSpec model;
    model.name = "model";
    model.type = OptionType::kText;
    model.reader = OptionReader::kChecker;
    model.default_value = defaults.model;
    for (std::string rest = model_names(); !rest.empty();) {  // "mutex, fenced-mutex, …"
      auto comma = rest.find(", ");
      model.allowed.push_back(rest.substr(0, comma));
      rest = comma == std::string::npos ? "" : rest.substr(comma + 2);
    }
    model.help = "linearizable: the model (default: chosen from the history)";
    OptionSpec time;
    time.name = "linear-time-limit";
    time.check_alias = "time-limit";
    time.type = OptionType::kNumber;
    time.reader = OptionReader::kChecker;
    time.default_value = defaults.time_limit_s;
    time.min = 0;
    time.min_exclusive = true;
    time.unit = "s";
    time.help = "linearizable: seconds of search before the verdict is unknown";
    OptionSpec memory;
    memory.name = "linear-memory-limit";
    memory.check_alias = "memory-limit";
    memory.type = OptionType::kBytes;
    memory.reader = OptionReader::kChecker;
    memory.default_value = defaults.memory_limit_bytes;
    memory.min = 1;
    memory.unit = "bytes";
    memory.help = "linearizable: memory for the search before the verdict is unknown (e.g. 512M, 2G)";
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
