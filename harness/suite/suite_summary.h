// What `fencecheck suite` says about the runs that were not as predicted: one line per such
// run naming its case, number, seed, directory and what broke the prediction (the checker off
// its prediction with that checker's own summary, why the run is undecided, or the harness
// failure its log ends with), and the summary line the suite's output, suite.md and
// suite.json end with. Pure functions over a SuiteResult; thread-safe; never throw on
// malformed results (only std::bad_alloc).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/suite/suite_runner.h"

namespace fencecheck {

// One line per run that is not as its case predicts (a matrix cell: not valid), so that a
// broken prediction seen once can be opened again. Empty when every run is as predicted.
std::vector<std::string> suite_problems(const SuiteResult& suite);

// "suite: exit 1 (a prediction broken): 259 of 260 run(s) as predicted; K3 run 10 (seed
// 2010): exclusion: expected invalid, got valid (…) — DIR": the exit code and what it means,
// the counts, and in full the first problem of the kind that decided the exit code.
std::string suite_summary(const SuiteResult& suite);

// A checker's verdict in a results.json: "valid", "invalid", "unknown", "skipped", or
// "missing" when the results do not hold it.
std::string checker_verdict_text(const nlohmann::json& results, const std::string& checker);

}  // namespace fencecheck
