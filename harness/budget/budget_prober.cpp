#include "harness/budget/budget_prober.h"
#include "harness/budget/json_member.h"

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
  bool unknown = false;
  for (const auto& name : watched) {
    const json& v = json_member(json_member(checkers, name.c_str()), "valid");
    if (v == false) return ProbeTry::Result::kBroke;
    if (v.is_null()) {
      why = "checker " + name + " has no verdict";
      unknown = true;
    } else if (v == "unknown") {
      why = "checker " + name + " is unknown";
      unknown = true;
    }
  }
  if (json_member(results, "valid") == "unknown") {
    const json& reasons = json_member(results, "unknown_reasons");
    why = "the run is unknown" + (reasons.is_array() && !reasons.empty() ? ": " + reasons[0].dump() : std::string());
    unknown = true;
  }
  const json& plan = json_member(json_member(results, "health"), "plan");
  if (plan.is_object() && plan.value("fired", 0) < plan.value("steps", 0)) {
    why = "the fault never fired (the plan ended unfinished)";
    unknown = true;
  }
  return unknown ? ProbeTry::Result::kUndecided : ProbeTry::Result::kSafe;
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

RunProber::RunProber(RunConfig base, const BudgetFault& fault, std::vector<std::string> watched, fs::path out)
    : base_(std::move(base)), fault_(fault), watched_(std::move(watched)), out_(std::move(out)),
      exe_(fs::read_symlink("/proc/self/exe")), stops_(std::make_unique<ScopedStopCount>()) {}

RunProber::~RunProber() = default;

ProbeTry RunProber::try_at(std::int64_t x, int attempt) {
  if (stops_->count() > 0) {
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
  if (result.interrupted) {
    interrupted = true;
    throw Interrupted("interrupted (Ctrl-C) during the run at " + std::to_string(x) + " ms");
  }
  const SuiteRun& run = result.rows.at(0).runs.at(0);
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
  }
  t.detail["seed"] = run.seed;
  t.detail["run_dir"] = run.run_dir.string();
  if (!why.empty()) t.detail["why"] = why;
  std::cout << "[" << fault_.name << " " << x << " ms, try " << attempt + 1 << "] " << to_string(t.result)
            << (why.empty() ? "" : " (" + why + ")") << " in " << static_cast<int>(run.seconds) << " s: "
            << run.run_dir.string() << std::endl;
  return t;
}

}  // namespace fencecheck
