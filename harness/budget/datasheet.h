// `fencecheck datasheet`: one lock configuration (a backend, a client, options) measured by
// real runs into one page — the budget of every fault that applies (budget_faults.h; the
// refused ones with the run's own reason), its token (none, unique and increasing, and
// whether it survives every server's crash), whether a holder is told it lost the lock and
// how soon, the blame class of every violation seen (docs/checkers.md), and the lock's own
// promise set beside what was measured. The sheet's runs use --resource fenced, so that each
// try also says whether the fence kept the data safe.
//
// make_datasheet() blocks for all its runs (minutes: a budget per fault); Ctrl-C ends the
// run in progress and the sheet stops there, keeping what it measured (interrupted = true).
// It writes datasheet.json, datasheet.md and datasheet.html into `dir`, after every fault.
// Not thread-safe: from the main thread (the runs' rule, budget_prober.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run/run_config.h"

namespace fencecheck {

struct DatasheetOptions {
  bool quick = false;               // profile_options(quick, …)
  std::vector<std::string> faults;  // the budget faults measured; empty: every one
  double budget_s = 3600;           // per fault
};

struct Datasheet {
  nlohmann::json doc;  // datasheet.json: the sheet's lines as docs/budget.md names them
  bool interrupted = false;
};

// base: the configuration, resolved. Throws HarnessError (or std::filesystem_error) when
// dir cannot be written, std::invalid_argument when the backend's options do not resolve.
Datasheet make_datasheet(const RunConfig& base, const DatasheetOptions& options, const std::filesystem::path& dir);

// The promise sentence for one fault's budget ("kept only below 950 ms of pause"), from its
// budget.json document. Pure.
std::string measured_sentence(const nlohmann::json& budget);

// The "data" entry of a fault's row from its budget.json: whether the fenced resource kept
// the data in every decided try, else the magnitude of loss nearest the safe side
// ("lost_from_ms" for a fault breaking above, "lost_up_to_ms" below); null without any
// decided try with a resource verdict. Pure.
nlohmann::json data_verdict(const nlohmann::json& budget);

// The "token" entry from a plain run's results.json and the kill-server budget's tries
// (null: not probed). Pure.
nlohmann::json token_verdict(const nlohmann::json& plain_results, const nlohmann::json& kill_budget);

// The "notice" entry: told and silent violations over every try of every budget, and the
// notice latencies' median, 90th percentile and maximum in ms. Pure.
nlohmann::json notice_summary(const std::vector<nlohmann::json>& budgets);

}  // namespace fencecheck
