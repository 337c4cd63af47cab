#include "harness/results.h"

#include <fstream>

#include "checkers/input_file.h"
#include "platform/errors.h"

namespace fencecheck {

std::vector<std::string> RunRecord::unknown_reasons() const {
  std::vector<std::string> reasons;
  if (health.is_object()) {
    for (const auto& p : health.value("problems", nlohmann::json::array())) {
      reasons.push_back("the bench failed: " + p.get<std::string>());
    }
  }
  if (interrupted) reasons.push_back("the test was interrupted before its time limit");
  if (checks_skipped) {
    reasons.push_back("the checkers were skipped (second Ctrl-C); the history is kept: judge it "
                      "with `fencecheck check <run dir>`");
  }
  return reasons;
}

nlohmann::json RunRecord::to_json() const {
  return {{"seed", seed},
          {"setup_seconds", setup_seconds},
          {"test_seconds", test_seconds},
          {"teardown_seconds", teardown_seconds},
          {"controller_cpu_seconds", controller_cpu_seconds},
          {"interrupted", interrupted},
          {"checks_skipped", checks_skipped},
          {"health", health}};
}

Results make_results(CheckReport report, RunOrigin origin, std::optional<RunRecord> run) {
  Results r;
  r.origin = origin;
  r.run = std::move(run);
  if (origin == RunOrigin::kFinishedRun && r.run) {
    for (auto& reason : r.run->unknown_reasons()) report.unknown_reasons.push_back(std::move(reason));
  } else if (origin == RunOrigin::kUnfinishedRun) {
    report.unknown_reasons.push_back(
        "the run did not finish (its results.json has no run block): what it recorded was "
        "checked, but a cut-short run cannot be valid");
  }
  r.report = std::move(report);
  return r;
}

nlohmann::json Results::to_json(const CheckRequest& request) const {
  nlohmann::json j = report.to_json(request);
  if (run) {
    j["run"] = run->to_json();
    j["run"].erase("health");
    j["health"] = run->health;
  }
  if (origin == RunOrigin::kUnfinishedRun) j["run"] = {{"finished", false}};
  return j;
}

std::string Results::summary() const {
  std::string s = report.summary();
  if (run && run->health.is_object()) {
    for (const auto& w : run->health.value("warnings", nlohmann::json::array())) {
      s += "warning: " + w.get<std::string>() + "\n";
    }
  }
  return s;
}

std::optional<RunRecord> read_run_record(const std::filesystem::path& results_json) {
  std::error_code ec;
  if (!std::filesystem::exists(results_json, ec)) return std::nullopt;
  const std::string file = results_json.string();
  std::unique_ptr<std::istream> in = open_input_stream(file);  // never waits on a FIFO
  nlohmann::json doc = nlohmann::json::parse(*in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) throw InputError(file, 0, "", "not a JSON object");
  if (!doc.contains("run") || doc["run"].value("finished", true) == false) return std::nullopt;
  const nlohmann::json& run = doc["run"];
  RunRecord r;
  try {
    r.seed = run.at("seed").get<std::uint64_t>();
    r.setup_seconds = run.value("setup_seconds", 0.0);
    r.test_seconds = run.value("test_seconds", 0.0);
    r.teardown_seconds = run.value("teardown_seconds", 0.0);
    r.controller_cpu_seconds = run.value("controller_cpu_seconds", 0.0);
    r.interrupted = run.at("interrupted").get<bool>();
    r.checks_skipped = run.value("checks_skipped", false);
    r.health = doc.value("health", nlohmann::json::object());
    if (!r.health.is_object()) throw InputError(file, 0, "health", "must be an object");
    for (const auto& p : r.health.value("problems", nlohmann::json::array())) {
      if (!p.is_string()) throw InputError(file, 0, "health.problems", "must be a list of strings");
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, 0, "run", std::string("malformed run block: ") + e.what());
  }
  return r;
}

}  // namespace fencecheck
