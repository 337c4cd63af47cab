#include "harness/budget/budget_prober.h"
#include "harness/budget/budget_report.h"
#include "platform/json_member.h"

#include <iostream>

#include "harness/suite/scenarios.h"
#include "harness/suite/suite_runner.h"
#include "platform/errors.h"
#include "platform/stop_signals.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

}  // namespace

ProbeTry::Result classify_try(const json& results, const std::vector<std::string>& watched, std::string& why) {
  const json& checkers = json_member(results, "checkers");
  bool all_said_valid = true;
  for (const auto& name : watched) {
    const json& v = json_member(json_member(checkers, name.c_str()), "valid");
    if (v == false) return ProbeTry::Result::kBroke;
    if (v != true) {  // unknown, skipped (nothing to judge), or no verdict at all
      why = "checker " + name + (v.is_null() ? " has no verdict" : " is " + v.dump());
      all_said_valid = false;
    }
  }
  if (json_member(results, "valid") == "unknown") {
    const json& reasons = json_member(results, "unknown_reasons");
    why = "the run is unknown" + (reasons.is_array() && !reasons.empty() ? ": " + reasons[0].dump() : std::string());
    return ProbeTry::Result::kUndecided;
  }
  const json& plan = json_member(json_member(results, "health"), "plan");
  if (!plan.is_object() || !plan["fired"].is_number() || !plan["steps"].is_number() ||
      plan["fired"].get<std::int64_t>() < plan["steps"].get<std::int64_t>()) {
    why = "the plan's step never fired";
    return ProbeTry::Result::kUndecided;
  }
  return all_said_valid ? ProbeTry::Result::kSafe : ProbeTry::Result::kUndecided;
}

json try_detail(const json& results) {
  json d = {{"verdict", json_member(results, "valid")}};
  json checkers = json::object();
  for (const auto& [name, c] : json_member(results, "checkers").items()) checkers[name] = json_member(c, "valid");
  d["checkers"] = checkers;
  d["classes"] = blame_counts(results);
  const json& exclusion = json_member(json_member(results, "checkers"), "exclusion");
  if (!json_member(exclusion, "notice").is_null()) d["notice"] = exclusion["notice"];
  json latencies = json::array();
  for (const auto& v : json_member(exclusion, "violations")) {
    const json& ns = json_member(json_member(v, "blame"), "notice_latency");
    if (ns.is_number()) latencies.push_back(ns.get<double>() / 1e6);
  }
  d["notice_latencies_ms"] = latencies;
  d["first_violation_s"] = json_member(exclusion, "first_violation_s");
  const json& tokens = json_member(json_member(results, "checkers"), "tokens");
  if (json_member(tokens, "with_token").is_number()) d["tokens_granted"] = tokens["with_token"];
  return d;
}

RunProber::RunProber(RunConfig base, const BudgetFault& fault, std::vector<std::string> watched, fs::path out,
                     const ScopedStopCount& stops)
    : base_(std::move(base)), fault_(fault), watched_(std::move(watched)), out_(std::move(out)),
      exe_(fs::read_symlink("/proc/self/exe")), stops_(stops) {}

ProbeTry RunProber::try_at(std::int64_t x, int attempt) {
  if (stops_.count() > 0 || interrupted) {
    interrupted = true;
    throw Interrupted("interrupted (Ctrl-C) before the run at " + std::to_string(x) + " ms");
  }
  const int n = ++runs_;
  fs::create_directories(out_ / "plans");
  const std::string plan = (out_ / "plans" / (fault_.name + "-" + std::to_string(x) + ".json")).string();
  RunConfig c = probe_config(base_, fault_, x, plan);
  SuiteCase one{"try-" + std::to_string(n), "", "", c.test_args(), nullptr, c.backend, fault_.name};
  SuiteOptions o;
  o.exe = exe_;
  o.dir = out_;  // the run in <out>/runs/try-<n>/<stamp>/, its log in <out>/logs/
  o.seed = base_.seed.value_or(1) + static_cast<std::uint64_t>(n);
  SuiteResult result = run_suite({one}, o);
  if (result.rows.empty() || result.rows[0].runs.empty()) {
    interrupted = true;
    throw Interrupted("interrupted (Ctrl-C) before the run at " + std::to_string(x) + " ms");
  }
  const SuiteRun& run = result.rows[0].runs[0];
  ProbeTry t;
  t.seconds = run.seconds;
  std::string why;
  if (run.results.is_null()) {
    t.result = ProbeTry::Result::kHarnessError;
    why = run.error;
    t.detail = {{"verdict", "harness error"}};
  } else {
    t.result = classify_try(run.results, watched_, why);
    t.detail = try_detail(run.results);
    // At 0 there is no fault to take effect (a clock step of 0 writes no line): the control.
    if (x > 0 && t.result != ProbeTry::Result::kUndecided && !fault_took_effect(fault_, run.run_dir)) {
      t.result = ProbeTry::Result::kUndecided;  // its fault never happened: it says nothing of the lock
      why = "no " + fault_.took_effect + " line took effect (history.jsonl)";
    }
  }
  if (result.interrupted) {
    // Ctrl-C came during it: the run healed and judged what it had. A violation it found is
    // proof; anything else is a shortened run that says nothing. The next try_at() stops.
    interrupted = true;
    if (t.result != ProbeTry::Result::kBroke) {
      t.result = ProbeTry::Result::kUndecided;
      why = "interrupted (Ctrl-C)";
    }
  }
  t.detail["result"] = to_string(t.result);
  t.detail["seed"] = run.seed;
  t.detail["run_dir"] = run.run_dir.string();
  if (!why.empty()) t.detail["why"] = why;
  std::cout << "[" << fault_.name << " " << x << " ms, try " << attempt + 1 << "] " << to_string(t.result)
            << (why.empty() ? "" : " (" + why + ")") << " in " << static_cast<int>(run.seconds) << " s: "
            << run.run_dir.string() << std::endl;
  return t;
}

BudgetRun run_budget(const RunConfig& base, const BudgetFault& fault, const std::vector<std::string>& watched,
                     BudgetSearchOptions options, const fs::path& out, const ScopedStopCount& stops) {
  RunProber prober(base, fault, watched, out, stops);
  options.on_try = [&](const BudgetResult& so_far) {  // what was probed is on disk after every try
    write_budget(out, budget_document(fault, base, watched, so_far, prober.interrupted), so_far);
  };
  BudgetRun run;
  run.result = search_budget(prober, options);
  run.interrupted = prober.interrupted;
  run.exit_code = budget_exit_code(run.result, run.interrupted);
  run.doc = budget_document(fault, base, watched, run.result, run.interrupted, run.exit_code);
  write_budget(out, run.doc, run.result);
  return run;
}

}  // namespace fencecheck
