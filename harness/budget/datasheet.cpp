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
#include "harness/budget/json_member.h"
#include "harness/run/run_store.h"
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

std::vector<json> tries_of(const json& budget) {
  std::vector<json> out;
  for (const auto& p : json_member(json_member(budget, "search"), "probes")) {
    for (const auto& t : json_member(p, "tries")) {
      json d = json_member(t, "detail");
      d["magnitude"] = p.value("magnitude", 0);
      out.push_back(d);
    }
  }
  return out;
}

// Whether the fenced resource kept the data in every try of a budget.
json data_verdict(const json& budget) {
  std::optional<std::int64_t> lost_at;
  int tries = 0;
  for (const json& t : tries_of(budget)) {
    const json& v = json_member(json_member(t, "checkers"), "resource");
    if (v.is_null()) continue;
    ++tries;
    if (v == false) lost_at = std::min(lost_at.value_or(t["magnitude"].get<std::int64_t>()), t["magnitude"].get<std::int64_t>());
  }
  if (tries == 0) return nullptr;
  return lost_at ? json{{"safe", false}, {"lost_from_ms", *lost_at}, {"tries", tries}} : json{{"safe", true}, {"tries", tries}};
}

}  // namespace

std::string measured_sentence(const json& budget) {
  const json& search = json_member(budget, "search");
  if (!search.is_object()) return "not measured";
  const std::string outcome = search.value("outcome", "undecided");
  const std::string what = budget.value("magnitude", "fault");
  const bool below = budget.value("breaks", "above") == "below";
  if (outcome == "safe-everywhere") {  // the breaking end was safe: hi, or lo for a restart delay
    return below ? "kept at every " + what + " probed, down to " + std::to_string(search["options"].value("lo", 0)) + " ms"
                 : "kept at every " + what + " probed, up to " + std::to_string(search["options"].value("hi", 0)) + " ms";
  }
  if (outcome == "broken-everywhere") return "broken at every " + what + " probed";
  if (outcome == "boundary") {
    const auto safe = search["safe_at"].get<std::int64_t>(), broken = search["broken_at"].get<std::int64_t>();
    return below ? "kept only with a " + what + " of at least " + std::to_string(safe) + " ms (broken at " +
                       std::to_string(broken) + " ms)"
                 : "kept only below " + std::to_string(broken) + " ms of " + what + " (kept at " + std::to_string(safe) +
                       " ms)";
  }
  return search.value("summary", "undecided");
}

json token_verdict(const json& plain, const json& kill_budget) {
  json out = json::object();
  const json& tokens = json_member(json_member(plain, "checkers"), "tokens");
  const json granted = json_member(tokens, "with_token");
  if (tokens.is_null()) {
    out["kind"] = "not probed";
  } else if (granted.is_number() && granted.get<std::int64_t>() == 0) {
    out["kind"] = "none";
  } else {
    out["kind"] = json_member(tokens, "valid") == true ? "unique and increasing" : "not unique or not increasing";
  }
  if (kill_budget.is_null() || out["kind"] == "none") {
    out["after_every_server_crashed"] = out["kind"] == "none" ? "no token" : "not probed";
    return out;
  }
  int backwards = 0, runs = 0;
  for (const json& t : tries_of(kill_budget)) {
    const json& v = json_member(json_member(t, "checkers"), "tokens");
    if (v.is_null()) continue;
    ++runs;
    backwards += v == false ? 1 : 0;
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
    for (const json& t : tries_of(b)) {
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
  auto save = [&] { write_datasheet(dir, doc); };
  std::cout << "fencecheck datasheet: " << base.backend << " (" << base.opts.text("client") << "): a plain run for the "
            << "token" << std::endl;
  const json plain = plain_run(base, dir);
  doc["plain_run"] = json_member(plain, "run_dir");
  if (plain.is_null()) {  // Ctrl-C during it
    sheet.interrupted = true;
    doc["interrupted"] = true;
    save();
    return sheet;
  }
  json kill_budget;
  std::vector<json> budgets;
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
    RunProber prober(base, fault, {"exclusion"}, out);
    o.on_try = [&](const BudgetResult& so_far) {
      write_budget(out, budget_document(fault, base, {"exclusion"}, so_far, prober.interrupted), so_far);
    };
    const BudgetResult r = search_budget(prober, o);
    const json budget = budget_document(fault, base, {"exclusion"}, r, prober.interrupted);
    write_budget(out, budget, r);
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
    if (fault.name == "kill-server") kill_budget = budget;
    sheet.interrupted = prober.interrupted;
    doc["token"] = token_verdict(plain, kill_budget);
    doc["notice"] = notice_summary(budgets);
    save();
    if (sheet.interrupted) break;
  }
  doc["token"] = token_verdict(plain, kill_budget);
  doc["notice"] = notice_summary(budgets);
  doc["interrupted"] = sheet.interrupted;
  save();
  return sheet;
}

}  // namespace fencecheck
