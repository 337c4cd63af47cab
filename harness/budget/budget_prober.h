// The real Prober of `fencecheck budget` and `fencecheck datasheet`: each try is a real
// `fencecheck run` child process (harness/suite/suite_runner.h) of the user's configuration
// with the fault's one-step plan at magnitude X (budget_faults.h), in
// <out>/runs/try-<n>/<stamp>/, its plan in <out>/plans/<fault>-<X>.json.
//
// A try broke when a watched checker found the run invalid (a violation is evidence even
// when the bench had trouble too). It is safe only when every watched checker said valid,
// the run was not unknown, the plan's step fired, and (at any X > 0: at 0 there is no fault,
// the probe is the control) the history shows the fault took effect
// (BudgetFault::took_effect); anything else is undecided — a skipped checker, a
// pause-after-send that no acquire took, a kill of nodes already down. A run that left no
// results.json (exit 3) is a harness error. Ctrl-C reaches the run in progress, which heals
// and judges what it recorded: that try is kept (broken if it found a violation, else
// undecided), `interrupted` is set and the next try_at() throws Interrupted; one that comes
// between two runs is counted by the caller's ScopedStopCount and seen before the next.
// Not thread-safe: one prober per search, from the main thread (the suite runner's rule).
// A try blocks for as long as its run takes; HarnessError when a run cannot be started.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/budget/budget_faults.h"
#include "harness/budget/budget_search.h"
#include "harness/run/run_config.h"
#include "platform/stop_signals.h"

namespace fencecheck {

// What one try's results.json says for the watched checkers; `why` gets the reason of an
// undecided try. Pure: for the unit tests.
ProbeTry::Result classify_try(const nlohmann::json& results, const std::vector<std::string>& watched,
                              std::string& why);

// What budget.json keeps of one try: its seed and run directory, the run's verdict, every
// checker's, the exclusion checker's blame classes and notices (docs/checkers.md), the
// notice latencies of the violations it lists, the first violation's time.
nlohmann::json try_detail(const nlohmann::json& results);

class RunProber final : public Prober {
 public:
  // base: the user's options, resolved. watched: the checkers whose violations break a
  // try. out: the search's directory (exists). fault and stops (the command's, held for its
  // whole life) must outlive the prober.
  RunProber(RunConfig base, const BudgetFault& fault, std::vector<std::string> watched, std::filesystem::path out,
            const ScopedStopCount& stops);
  ProbeTry try_at(std::int64_t x, int attempt) override;
  bool interrupted = false;  // Ctrl-C came: try_at() threw Interrupted

 private:
  RunConfig base_;
  const BudgetFault& fault_;
  std::vector<std::string> watched_;
  std::filesystem::path out_;
  std::filesystem::path exe_;
  int runs_ = 0;
  const ScopedStopCount& stops_;
};

struct BudgetRun {
  BudgetResult result;
  bool interrupted = false;
  int exit_code = 0;  // budget_exit_code()
  nlohmann::json doc;  // budget.json as written
};

// One fault's search over real runs, as `fencecheck budget` and each datasheet row make
// it: budget.json, budget.md and budget.svg in out after every try and at the end. Blocks
// for every run; throws HarnessError when out cannot be written (what was written stays).
BudgetRun run_budget(const RunConfig& base, const BudgetFault& fault, const std::vector<std::string>& watched,
                     BudgetSearchOptions options, const std::filesystem::path& out, const ScopedStopCount& stops);

}  // namespace fencecheck
