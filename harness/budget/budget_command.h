// `fencecheck budget`: how large a fault (a pause, a cut, a clock jump, a restart delay)
// one lock configuration takes before a watched checker finds a violation — the run's
// options as for `run`, plus --fault, --range, --tries, --resolution, --budget, --checker.
// Each try is a real run (budget_prober.h); the search is budget_search.h's; what it writes
// is budget_report.h's, into <store>/<name>-budget-<fault>/<stamp>/, after every try.
//
// Exit codes: 0 boundary found; 1 none in range (the summary says on which side);
// 2 undecided (unknown runs, the budget spent before a bracket, Ctrl-C); 3 bad options or
// a broken bench. Also the search's options as the datasheet shares them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/budget/budget_search.h"
#include "harness/run/run_config.h"

namespace fencecheck {

// "LO:HI" as whole ms, 0 <= LO < HI. Throws std::invalid_argument naming --range.
std::pair<std::int64_t, std::int64_t> parse_range(const std::string& text);

// The search options of a profile: quick (3 tries, a quarter of the lease, each probe ends
// at its first break, over 0 … 2 leases; 1 for a restart delay, whose violations lie below)
// or full (5 tries, a tenth, every try run for the rate plot, over 0 … 3 leases; 2).
BudgetSearchOptions profile_options(bool quick, BreaksWhere breaks, std::int64_t lease_ms);

void add_budget_command(CLI::App& app);

}  // namespace fencecheck
