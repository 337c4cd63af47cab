#include "harness/run/run_options.h"

#include <algorithm>

#include "adapters/registry.h"
#include "checkers/registry.h"
#include "nemesis/fault_registry.h"
#include "platform/runtime_registry.h"

namespace fencecheck {
namespace {

OptionSpec integer(std::string name, OptionReader reader, nlohmann::json default_value, double min, double max,
                   std::string unit, std::string help) {
  OptionSpec s = declare_option(std::move(name), reader, OptionType::kInteger, std::move(default_value),
                                std::move(unit), std::move(help));
  s.min = min;
  s.max = max;
  return s;
}

constexpr double kNoMax = std::numeric_limits<double>::infinity();

// The run's own and the workload's options. Derived defaults come after what they follow
// from: --op-timeout-ms from --pause-ms (a fault option, declared before these are
// derived), --stall-ms from --op-timeout-ms.
std::vector<OptionSpec> run_and_workload_options() {
  constexpr auto kRun = OptionReader::kRun;
  constexpr auto kWorkload = OptionReader::kWorkload;
  OptionSpec time_limit = integer("time-limit", kRun, 30.0, 0, kNoMax, "s",
                                  "seconds of test (setup and checks come on top)");
  time_limit.type = OptionType::kNumber;
  time_limit.min_exclusive = true;
  OptionSpec op_timeout = integer("op-timeout-ms", kRun, nullptr, 1, kNoMax, "ms",
                                  "deadline of one client op; past it the op is info");
  op_timeout.derived = "max(5000, pause + 2000)";
  op_timeout.derive = [](const OptionValues& v) {
    return std::max<std::int64_t>(5000, v.integer("pause-ms") + 2000);
  };
  OptionSpec stall = integer("stall-ms", kRun, nullptr, 1, kNoMax, "ms",
                             "no ok op for this long while no fault is in force ends the run as unknown");
  stall.derived = "max(10000, 2 × op timeout)";
  stall.derive = [](const OptionValues& v) {
    return std::max<std::int64_t>(10000, 2 * v.integer("op-timeout-ms"));
  };
  return {
      integer("concurrency", kRun, 5, 1, 64, "", "client processes"),
      integer("keys", kWorkload, 1, 1, 1000, "", "locks (and resource keys)"),
      integer("hold-ms", kWorkload, 100, 0, kNoMax, "ms", "longest time a client holds a lock"),
      integer("hold-min-ms", kWorkload, 0, 0, kNoMax, "ms",
              "shortest time a client holds a lock: each hold is drawn between it and --hold-ms"),
      integer("ttl-ms", kRun, 1000, 1, kNoMax, "ms", "lease of each grant"),
      integer("nemesis-interval", OptionReader::kNemesis, 5000, 1, kNoMax, "ms", "time between the starts of faults"),
      op_timeout,
      integer("max-info", kRun, 1000, 1, kNoMax, "",
              "ops of unknown outcome one client may have before it stops (the run is then unknown)"),
      stall,
      time_limit,
  };
}

}  // namespace

OptionSchema make_run_option_schema() {
  OptionSchema schema(fault_option_specs());
  schema.add(run_and_workload_options());
  schema.add(checker_option_specs());
  schema.add(runtime_option_specs());
  schema.add(client_option_specs());
  return schema;
}

const OptionSchema& run_option_schema() {
  static const OptionSchema schema = make_run_option_schema();
  return schema;
}

}  // namespace fencecheck
