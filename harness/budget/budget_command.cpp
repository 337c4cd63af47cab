#include "harness/budget/budget_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "checkers/registry.h"
#include "harness/budget/budget_faults.h"
#include "harness/budget/budget_prober.h"
#include "harness/budget/budget_report.h"
#include "platform/stop_signals.h"
#include "harness/run/run_command.h"
#include "harness/option_schema.h"
#include "harness/subcommand.h"
#include "harness/run/run_store.h"
#include "platform/errors.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;

struct BudgetArgs {
  RunArgs run;
  std::string fault;
  std::string range;  // empty: the profile's
  std::optional<int> tries;
  std::optional<std::int64_t> resolution;
  double budget_s = 3600;
  std::vector<std::string> watched = {"exclusion"};
  bool quick = false;
};

int budget_main(BudgetArgs& a, const CLI::App& cmd) {
  const ScopedStopCount stops;  // Ctrl-C between two runs, for the whole search
  // The run options a probe sets itself: given here they would mean nothing.
  refuse_flags(cmd, {"--nemesis", "--plan", "--replay", "--junit", "--time-limit"}, "budget",
               "each probe is one fault of the magnitude searched, as a plan, and lasts as long as that fault needs");
  a.run.finish(run_option_schema());
  RunConfig config = a.run.config;
  config.nemesis.clear();
  config.resolve();
  const BudgetFault& fault = *find_budget_fault(a.fault);
  for (const auto& w : a.watched) {
    if (find_checker(w) == nullptr) throw std::invalid_argument("--checker: unknown checker \"" + w + "\"; checkers: " + checker_names());
  }
  BudgetSearchOptions o = profile_options(a.quick, fault.breaks, lease_ms(config));
  if (!a.range.empty()) std::tie(o.lo, o.hi) = parse_range(a.range);
  if (a.tries) o.tries = *a.tries;
  if (a.resolution) o.resolution = *a.resolution;
  o.budget_s = a.budget_s;
  for (const std::int64_t x : {o.lo, o.hi}) {  // both ends: a magnitude a plan cannot say is refused here
    if (auto why = budget_fault_problem(config, fault, x)) {
      throw std::invalid_argument("this configuration cannot take " + fault.name + " of " + std::to_string(x) + " ms: " + *why);
    }
  }
  const fs::path out = create_stamped_dir(fs::path(config.store) / (config.name + "-budget-" + fault.name));
  write_command_repro(out, own_arguments(), config.seed.value_or(0));
  std::cout << "fencecheck budget: " << config.backend << " (" << config.opts.text("client") << ") × " << fault.name
            << ": " << fault.magnitude << " " << o.lo << "–" << o.hi << " ms, " << o.tries << " tries, resolution "
            << o.resolution << " ms; watching " << join(a.watched, ", ") << "; in " << out.string() << std::endl;

  const BudgetRun run = run_budget(config, fault, a.watched, o, out, stops);
  std::cout << "fencecheck budget: " << run.result.summary()
            << (run.result.stopped_by.empty() ? "" : " (stopped: " + run.result.stopped_by + ")")
            << "\nbudget: " << (out / "budget.md").string() << std::endl;
  return run.exit_code;
}

}  // namespace

constexpr std::int64_t kDay = 86'400'000;  // the longest fault a plan step says (plans.md)

std::pair<std::int64_t, std::int64_t> parse_range(const std::string& text) {
  const std::size_t colon = text.find(':');
  auto whole = [&](const std::string& part) -> std::int64_t {
    if (part.empty() || !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        part.size() > 9) {
      throw std::invalid_argument("--range \"" + text + "\": \"" + part + "\" is not a whole number of ms (LO:HI, e.g. 0:3000)");
    }
    return std::stoll(part);
  };
  if (colon == std::string::npos) throw std::invalid_argument("--range \"" + text + "\" must be LO:HI in ms, e.g. 0:3000");
  const std::int64_t lo = whole(text.substr(0, colon)), hi = whole(text.substr(colon + 1));
  if (lo >= hi) throw std::invalid_argument("--range \"" + text + "\": LO must be below HI");
  return {lo, hi};
}

BudgetSearchOptions profile_options(bool quick, BreaksWhere breaks, std::int64_t lease_ms) {
  if (lease_ms <= 0 || lease_ms > kDay / 3) {
    throw std::invalid_argument("a lease of " + std::to_string(lease_ms) + " ms: budgets search leases up to 8 hours");
  }
  BudgetSearchOptions o;
  o.breaks = breaks;
  o.lo = 0;
  // A lease lock breaks near one lease (a pause) or below 4/5 of it (a restart delay, the
  // hold budget_faults.h gives): the quick range looks one lease past that, the full two.
  o.hi = (breaks == BreaksWhere::kBelow ? 1 : 2) * lease_ms + (quick ? 0 : lease_ms);
  o.tries = quick ? 3 : 5;
  o.resolution = std::max<std::int64_t>(1, lease_ms / (quick ? 4 : 10));
  o.stop_at_first_break = quick;
  return o;
}

void add_budget_command(CLI::App& app) {
  auto a = std::make_shared<BudgetArgs>();
  a->run.config.opts = run_option_schema().defaults();
  CLI::App* cmd = app.add_subcommand(
      "budget", "Find how large a fault (a pause, a cut, a clock jump, a restart delay) a lock takes before it breaks");
  add_run_options(*cmd, a->run, run_option_schema());
  cmd->add_option("--fault", a->fault, "the fault whose magnitude is searched: " + budget_fault_names())
      ->required()
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (const auto& f : budget_faults()) names.push_back(f.name);
        return names;
      }()));
  cmd->add_option("--range", a->range, "LO:HI, the magnitudes searched in ms (default 0 to 3 leases, 2 with --quick; kill-server: 2, 1)");
  cmd->add_option("--tries", a->tries, "runs per magnitude (default 5; 3 with --quick)")->check(CLI::Range(1, 100));
  cmd->add_option("--resolution", a->resolution, "stop when the boundary is bracketed this closely, in ms (default a "
                                                 "tenth of the lease; a quarter with --quick)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86'400'000}));
  cmd->add_option("--budget", a->budget_s, "seconds of runs after which no new run starts")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--checker", a->watched, "the checkers whose violations count (default exclusion): " + checker_names())
      ->delimiter(',');
  cmd->add_flag("--quick", a->quick, "3 tries, a coarse resolution, each magnitude settled by its first violation");
  cmd->callback([a, cmd] { finish_subcommand("budget", [&] { return budget_main(*a, *cmd); }); });
}

}  // namespace fencecheck
