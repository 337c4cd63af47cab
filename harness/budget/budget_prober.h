// The real Prober of `fencecheck budget` and `fencecheck datasheet`: each try is a real
// `fencecheck run` child process (harness/suite/suite_runner.h) of the user's configuration
// with the fault's one-step plan at magnitude X (budget_faults.h), in
// <out>/runs/try-<n>/<stamp>/, its plan in <out>/plans/<fault>-<X>.json.
//
// A try broke when a watched checker found the run invalid (a violation is evidence even
// when the bench had trouble too); it is undecided when a watched checker or the run is
// unknown, or the plan's fault never fired (a probe that did not inject its fault says
// nothing); a harness error when the run left no results.json (exit 3). Ctrl-C reaches the
// run in progress, which heals and ends; try_at() then throws Interrupted and
// `interrupted` is set; one that comes between two runs is seen before the next (the prober
// holds a SIGINT/SIGTERM handler for its lifetime). Not thread-safe: one prober per search, from the main thread (the
// suite runner's rule). A try blocks for as long as its run takes.
#pragma once

#include <filesystem>
#include <memory>
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
  // try. out: the search's directory (exists).
  RunProber(RunConfig base, const BudgetFault& fault, std::vector<std::string> watched, std::filesystem::path out);
  ~RunProber() override;
  ProbeTry try_at(std::int64_t x, int attempt) override;
  bool interrupted = false;  // Ctrl-C came: try_at() threw Interrupted

 private:
  RunConfig base_;
  const BudgetFault& fault_;
  std::vector<std::string> watched_;
  std::filesystem::path out_;
  std::filesystem::path exe_;
  int runs_ = 0;
  std::unique_ptr<ScopedStopCount> stops_;  // Ctrl-C between runs, for its lifetime
};

}  // namespace fencecheck
