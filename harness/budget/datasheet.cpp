#include "harness/budget/datasheet.h"

#include <algorithm>
#include <iostream>

#include "adapters/registry.h"
#include "backends/registry.h"
#include "harness/budget/budget_command.h"
#include "harness/budget/budget_faults.h"
#include "harness/budget/budget_prober.h"
#include "harness/budget/budget_report.h"
#include "harness/budget/datasheet_render.h"
#include "platform/json_member.h"
#include "harness/run/run_store.h"
#include "platform/stop_signals.h"
#include "harness/suite/suite_runner.h"
#include "platform/atomic_file.h"
#include "platform/json_text.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What the lock says of itself: the adapter's library, else the backend's native client.
std::string promise_of(const RunConfig& c) {
  if (const AdapterInfo* a = find_adapter(c.opts.text("client"))) return a->promise;
  const BackendInfo* b = find_backend(c.backend);
  return b != nullptr ? b->promise : "";
}

// A few seconds of the plain workload, no fault: are its tokens unique and increasing?
json plain_run(const RunConfig& base, const fs::path& dir) {
  RunConfig c = base;
  c.nemesis.clear();
  c.plan.clear();
  c.opts.set("time-limit", 4.0);
  SuiteOptions o;
  o.exe = fs::read_symlink("/proc/self/exe");
  o.dir = dir;  // the run in <dir>/runs/plain/<stamp>/
  o.seed = base.seed.value_or(1);
  SuiteResult r = run_suite({{"plain", "", "", c.test_args(), nullptr, c.backend, "none"}}, o);
  if (r.interrupted || r.rows.empty() || r.rows[0].runs.empty()) return nullptr;
  const SuiteRun& run = r.rows[0].runs[0];
  json out = run.results.is_null() ? json{{"error", run.error}} : run.results;
  out["run_dir"] = run.run_dir.string();
  return out;
}

// The decided tries of a budget (safe or broke: the fault took effect and the run said
// something), each try's detail with its probe's magnitude. Undecided tries say nothing.
std::vector<json> decided_tries(const json& budget) {
  std::vector<json> out;
  for (const auto& p : json_member(json_member(budget, "search"), "probes")) {
    const json& x = json_member(p, "magnitude");
    for (const auto& t : json_member(p, "tries")) {
      const json& result = json_member(t, "result");
      if (!x.is_number_integer() || (result != "safe" && result != "broke")) continue;
      json d = json_member(t, "detail");
      d["magnitude"] = x;
      out.push_back(d);
    }
  }
  return out;
}

// A checker's verdict in a try's detail: true, false, or nothing said (unknown, skipped).
std::optional<bool> verdict_of(const json& detail, const char* checker) {
  const json& v = json_member(json_member(detail, "checkers"), checker);
  return v.is_boolean() ? std::optional<bool>(v.get<bool>()) : std::nullopt;
}

}  // namespace

std::string measured_sentence(const json& budget) {
  const json& search = json_member(budget, "search");
  if (!search.is_object()) return "not measured";
  const std::string outcome = search.value("outcome", "undecided");
  const std::string what = budget.value("magnitude", "fault");
  const bool below = budget.value("breaks", "above") == "below";
  const json& options = json_member(search, "options");
  if (outcome == "safe-everywhere" && options.is_object()) {  // the breaking end was safe: hi, or lo for a restart delay
    return below ? "kept at every " + what + " probed, down to " + std::to_string(options.value("lo", 0)) + " ms"
                 : "kept at every " + what + " probed, up to " + std::to_string(options.value("hi", 0)) + " ms";
  }
  if (outcome == "broken-everywhere") return "broken at every " + what + " probed";
  if (outcome == "boundary" && json_member(search, "safe_at").is_number_integer() && json_member(search, "broken_at").is_number_integer()) {
    const auto safe = json_member(search, "safe_at").get<std::int64_t>(), broken = json_member(search, "broken_at").get<std::int64_t>();
    return below ? "kept only with a " + what + " of at least " + std::to_string(safe) + " ms (broken at " +
                       std::to_string(broken) + " ms)"
                 : "kept only below " + std::to_string(broken) + " ms of " + what + " (kept at " + std::to_string(safe) +
                       " ms)";
  }
  return search.value("summary", "undecided");
}

// Whether the fenced resource kept the data in every decided try of a budget; when not,
// the magnitudes of loss nearest the safe side (the lowest for a fault breaking above,
// the highest for one breaking below: "lost up to X ms" of restart delay).
json data_verdict(const json& budget) {
  const bool below = json_member(budget, "breaks") == "below";
  std::optional<std::int64_t> lost_at;
  int tries = 0;
  for (const json& t : decided_tries(budget)) {
    const std::optional<bool> kept = verdict_of(t, "resource");
    if (!kept) continue;
    ++tries;
    const std::int64_t x = t["magnitude"].get<std::int64_t>();
    if (!*kept) lost_at = lost_at ? (below ? std::max(*lost_at, x) : std::min(*lost_at, x)) : x;
  }
  if (tries == 0) return nullptr;
  if (!lost_at) return {{"safe", true}, {"tries", tries}};
  return {{"safe", false}, {below ? "lost_up_to_ms" : "lost_from_ms", *lost_at}, {"tries", tries}};
}

json token_verdict(const json& plain, const json& kill_budget) {
  json out = json::object();
  const json& tokens = json_member(json_member(plain, "checkers"), "tokens");
  const json granted = json_member(tokens, "with_token");
  const json valid = json_member(tokens, "valid");
  if (!valid.is_boolean() && !(granted.is_number() && granted.get<std::int64_t>() == 0)) {
    out["kind"] = "not probed";  // no plain run, or its tokens checker said nothing (unknown)
  } else if (granted.is_number() && granted.get<std::int64_t>() == 0) {
    out["kind"] = "none";
  } else {
    out["kind"] = valid == true ? "unique and increasing" : "not unique or not increasing";
  }
  if (kill_budget.is_null() || out["kind"] == "none") {
    out["after_every_server_crashed"] = out["kind"] == "none" ? "no token" : "not probed";
    return out;
  }
  int backwards = 0, runs = 0;
  for (const json& t : decided_tries(kill_budget)) {  // every server was killed in each
    const std::optional<bool> increasing = verdict_of(t, "tokens");
    if (!increasing) continue;
    ++runs;
    backwards += *increasing ? 0 : 1;
  }
  out["after_every_server_crashed"] = runs == 0       ? "not probed"
                                      : backwards > 0 ? "went backwards in " + std::to_string(backwards) + " of " +
                                                            std::to_string(runs) + " runs"
                                                      : "kept increasing in " + std::to_string(runs) + " runs";
  return out;
}

json notice_summary(const std::vector<json>& budgets) {
  std::int64_t told = 0, silent = 0;
  std::vector<double> latencies;
  for (const json& b : budgets) {
    for (const json& t : decided_tries(b)) {
      const json& notice = json_member(t, "notice");  // none when the run found no violation
      if (notice.is_object()) {
        told += notice.value("told", 0);
        silent += notice.value("silent", 0);
      }
      for (const auto& ms : json_member(t, "notice_latencies_ms")) latencies.push_back(ms.get<double>());
    }
  }
  json out = {{"told", told}, {"silent", silent}};
  if (!latencies.empty()) {
    std::sort(latencies.begin(), latencies.end());
    auto at = [&](double q) { return latencies[static_cast<std::size_t>(q * static_cast<double>(latencies.size() - 1))]; };
    out["latency_ms"] = {{"median", at(0.5)}, {"p90", at(0.9)}, {"max", latencies.back()}, {"count", latencies.size()}};
  }
  return out;
}

Datasheet make_datasheet(const RunConfig& given, const DatasheetOptions& options, const fs::path& dir) {
  const ScopedStopCount stops;  // Ctrl-C between two runs, for the whole sheet
  RunConfig base = given;
  base.resource = "fenced";
  Datasheet sheet;
  json& doc = sheet.doc;
  doc = {{"backend", base.backend},
         {"client", base.opts.text("client")},
         {"profile", options.quick ? "quick" : "full"},
         {"lease_ms", lease_ms(base)},
         {"promise", promise_of(base)},
         {"config", base.to_json()},
         {"faults", json::array()}};
  json plain_results;  // the plain run's results.json: the token
  json kill_budget;  // the budget of the fault that kills every server: the token's crash probe
  std::vector<json> budgets;
  auto save = [&] {  // the lines that sum the budgets so far, then the pages
    doc["token"] = token_verdict(plain_results, kill_budget);
    doc["notice"] = notice_summary(budgets);
    doc["interrupted"] = sheet.interrupted;
    write_datasheet(dir, doc);
  };
  std::cout << "fencecheck datasheet: " << base.backend << " (" << base.opts.text("client") << "): a plain run for the "
            << "token" << std::endl;
  plain_results = plain_run(base, dir);
  doc["plain_run"] = json_member(plain_results, "run_dir");
  if (plain_results.is_null() || stops.count() > 0) {  // Ctrl-C during it
    sheet.interrupted = true;
    save();
    return sheet;
  }
  for (const BudgetFault& fault : budget_faults()) {
    if (!options.faults.empty() && std::find(options.faults.begin(), options.faults.end(), fault.name) == options.faults.end()) continue;
    json row = {{"fault", fault.name}, {"magnitude", fault.magnitude}, {"description", fault.description}};
    if (auto why = budget_fault_problem(base, fault)) {
      row["refused"] = *why;
      doc["faults"].push_back(row);
      save();
      continue;
    }
    const fs::path out = dir / "budgets" / fault.name;
    fs::create_directories(out);
    BudgetSearchOptions o = profile_options(options.quick, fault.breaks, lease_ms(base));
    o.budget_s = options.budget_s;
    const BudgetRun run = run_budget(base, fault, {"exclusion"}, o, out, stops);
    const json& budget = run.doc;
    const BudgetResult& r = run.result;
    row["budget"] = budget["search"];
    row["budget"].erase("probes");  // budget.json beside it keeps them
    row["probes"] = budget["search"]["probes"].size();
    row["dir"] = fs::relative(out, dir).string();
    row["measured"] = measured_sentence(budget);
    row["classes"] = budget["classes"];
    row["data"] = data_verdict(budget);
    row["plot"] = rate_plot_svg(r, fault.magnitude, lease_ms(base));
    doc["faults"].push_back(row);
    budgets.push_back(budget);
    if (fault.kills_every_server) kill_budget = budget;
    sheet.interrupted = run.interrupted;
    save();
    if (sheet.interrupted) break;
  }
  save();
  return sheet;
}

}  // namespace fencecheck
