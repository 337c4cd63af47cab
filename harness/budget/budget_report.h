// What `fencecheck budget` writes (budget.json, budget.md, budget.svg) and the plot the
// datasheet draws for each fault: pure functions of a finished (or interrupted) search,
// thread-safe, but write_budget(), which writes three files (each atomically) and throws
// HarnessError when it cannot. budget.json's shape is docs/budget.md's contract.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/budget/budget_faults.h"
#include "harness/budget/budget_search.h"

namespace fencecheck {

// The exit code of a search (docs/budget.md): 2 when interrupted; 3 when something other
// than the budget or Ctrl-C stopped it (harness errors in a row, a write that failed), or
// its last probe's tries all failed as a harness; else BudgetResult::exit_code().
int budget_exit_code(const BudgetResult& result, bool interrupted);

// budget.json: the fault and what X is, the lease, the watched checkers, the search
// (BudgetResult::to_json()), the violations' blame classes over every try, the exit code
// (budget_exit_code() unless given).
nlohmann::json budget_document(const BudgetFault& fault, const RunConfig& config, const std::vector<std::string>& watched,
                               const BudgetResult& result, bool interrupted, std::optional<int> exit_code = std::nullopt);

// The violation classes (docs/checkers.md, blame) counted over every try of the search.
nlohmann::json classes_over_tries(const BudgetResult& result);

// An inline SVG: every probe's violation rate (broken / decided tries) against its
// magnitude, the bracket shaded, the lease marked. Readable offline (no script, no font).
std::string rate_plot_svg(const BudgetResult& result, const std::string& magnitude, std::int64_t lease_ms);

// budget.md: the summary sentence, the bracket, a table of probes.
std::string budget_markdown(const nlohmann::json& doc);

// Writes budget.json, budget.md and budget.svg into dir (each atomically).
void write_budget(const std::filesystem::path& dir, const nlohmann::json& doc, const BudgetResult& result);

}  // namespace fencecheck
