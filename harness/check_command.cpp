#include "harness/check_command.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include "checkers/check.h"
#include "checkers/event_source.h"
#include "checkers/linear/linearizable_checker.h"
#include "checkers/registry.h"
#include "platform/atomic_file.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;

struct CheckArgs {
  std::string path;
  std::vector<std::string> checkers;
  std::string resource_log;
  std::string out;
  bool json = false;
  CheckRequest request;
};

int run_check(const CheckArgs& a) {
  CheckRequest req = a.request;
  req.checkers = a.checkers;
  if (!is_known_model(req.options.model)) {
    std::cerr << "fencecheck check: unknown model \"" << req.options.model << "\"; valid models: "
              << model_names() << "\n";
    return 3;
  }
  fs::path out = a.out;
  std::error_code ec;
  if (fs::is_directory(a.path, ec)) {
    fs::path dir = a.path;
    req.history = (dir / (req.format == "edn" ? "history.edn" : "history.jsonl")).string();
    if (!fs::exists(req.history)) {
      std::cerr << "fencecheck check: " << dir.string() << " is not a run directory: no "
                << fs::path(req.history).filename().string() << " in it\n";
      return 3;
    }
    if (a.resource_log.empty() && fs::exists(dir / "resource.jsonl")) {
      req.resource = (dir / "resource.jsonl").string();
    }
    if (out.empty()) out = dir / "results.json";
  } else if (fs::exists(a.path, ec)) {
    req.history = a.path;
  } else {
    std::cerr << "fencecheck check: " << a.path << ": no such file or directory\n";
    return 3;
  }
  if (!a.resource_log.empty()) req.resource = a.resource_log;

  CheckReport report;
  try {
    report = run_checks(req);
  } catch (const InputError& e) {
    std::cerr << "fencecheck check: " << e.what() << "\n";
    return 3;
  } catch (const std::invalid_argument& e) {
    std::cerr << "fencecheck check: " << e.what() << "\n";
    return 3;
  }
  nlohmann::json results = report.to_json(req);
  if (!out.empty()) {
    try {
      write_file_atomically(out, results.dump(2) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "fencecheck check: " << e.what() << "\n";
      return 3;
    }
  }
  if (a.json) {
    std::cout << results.dump(2) << "\n";
  } else {
    std::cout << req.history << ": " << report.events << " events";
    if (req.resource) std::cout << ", " << report.resource_entries << " resource log entries";
    std::cout << "\n" << report.summary();
    std::cout << "verdict: " << to_string(report.overall());
    if (!out.empty()) std::cout << " (results in " << out.string() << ")";
    std::cout << "\n";
  }
  return report.exit_code();
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Run the checkers on a recorded run directory or a history file");
  cmd->add_option("path", args->path, "run directory (history.jsonl, resource.jsonl) or history file")
      ->required();
  cmd->add_option("--checkers", args->checkers, "comma-separated checker names (default: all: " +
                                                     checker_names() + ")")
      ->delimiter(',');
  cmd->add_option("--resource-log", args->resource_log, "resource.jsonl to check (default: the run's)");
  cmd->add_option("--out", args->out, "where to write results.json (default: <run dir>/results.json)");
  cmd->add_flag("--json", args->json, "print results.json to stdout instead of the summary");
  cmd->add_option("--format", args->request.format, "history format: jsonl (default) or edn")
      ->check(CLI::IsMember({"jsonl", "edn"}));
  cmd->add_option("--model", args->request.options.model,
                  "linearizable: " + model_names() + " (default: chosen from the history)");
  cmd->add_option("--time-limit", args->request.options.time_limit_s,
                  "linearizable: seconds of search before the verdict is unknown")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--memory-limit", args->request.options.memory_limit_bytes,
                  "linearizable: memory for the search before the verdict is unknown (e.g. 512M, 2G)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  cmd->callback([args] { throw CLI::RuntimeError(run_check(*args)); });
}

}  // namespace fencecheck
