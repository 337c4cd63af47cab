#include "harness/check_command.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include "checkers/check.h"
#include "checkers/event_source.h"
#include "checkers/registry.h"
#include "harness/option_schema.h"
#include "harness/results.h"
#include "platform/atomic_file.h"
#include "platform/json_text.h"

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
  std::map<std::string, std::string> checker_options;  // as typed, by option name
};

// The checker options as declared with the checkers (checkers/registry.h): `run` takes the
// same ones.
const OptionSchema& checker_schema() {
  static const OptionSchema schema(checker_option_specs());
  return schema;
}

// A run directory is one `fencecheck run` made: it has a config.json. Its stored run block
// (results.json) decides whether the run finished and how; it is read, never rewritten.
RunOrigin origin_of(const fs::path& dir, std::optional<RunRecord>& record) {
  std::error_code ec;
  if (!fs::exists(dir / "config.json", ec)) return RunOrigin::kHistoryFile;
  record = read_run_record(dir / "results.json");
  return record ? RunOrigin::kFinishedRun : RunOrigin::kUnfinishedRun;
}

int run_check(const CheckArgs& a) {
  CheckRequest req = a.request;
  req.checkers = a.checkers;
  try {
    OptionValues values;
    checker_schema().apply_cli(a.checker_options, values);
    if (auto problem = checker_schema().problem(values)) throw std::invalid_argument(*problem);
    req.options = check_options(values, req.options);
  } catch (const std::invalid_argument& e) {
    std::cerr << "fencecheck check: " << e.what() << "\n";
    return kExitHarnessOrInput;
  }
  std::error_code ec;
  RunOrigin origin = RunOrigin::kHistoryFile;
  std::optional<RunRecord> record;
  fs::path out = a.out;
  try {
    if (fs::is_directory(a.path, ec)) {
      fs::path dir = a.path;
      req.history = (dir / (req.format == "edn" ? "history.edn" : "history.jsonl")).string();
      if (!fs::exists(req.history)) {
        std::cerr << "fencecheck check: " << dir.string() << " is not a run directory: no "
                  << fs::path(req.history).filename().string() << " in it\n";
        return kExitHarnessOrInput;
      }
      if (a.resource_log.empty() && fs::exists(dir / "resource.jsonl")) {
        req.resource = (dir / "resource.jsonl").string();
      }
      origin = origin_of(dir, record);
      if (!out.empty() && fs::exists(dir / "results.json") && fs::equivalent(out, dir / "results.json", ec)) {
        std::cerr << "fencecheck check: --out " << out.string()
                  << " is the run's own results.json, which check never overwrites; choose another file\n";
        return kExitHarnessOrInput;
      }
    } else if (fs::exists(a.path, ec)) {
      req.history = a.path;
    } else {
      std::cerr << "fencecheck check: " << a.path << ": no such file or directory\n";
      return kExitHarnessOrInput;
    }
    if (!a.resource_log.empty()) req.resource = a.resource_log;
    Results results = make_results(run_checks(req), origin, std::move(record));
    nlohmann::json doc = results.to_json(req);
    if (!out.empty()) write_file_atomically(out, dump_json(doc, 2) + "\n");
    if (a.json) {
      std::cout << dump_json(doc, 2) << "\n";
    } else {
      std::cout << req.history << ": " << results.report.events << " events";
      if (req.resource) std::cout << ", " << results.report.resource_entries << " resource log entries";
      std::cout << "\n" << results.summary();
      std::cout << "verdict: " << to_string(results.verdict());
      if (!out.empty()) std::cout << " (results in " << out.string() << ")";
      std::cout << "\n";
    }
    return results.exit_code();
  } catch (const std::exception& e) {
    // Bad input (InputError, an unknown checker) or a file that cannot be written: exit 3.
    std::cerr << "fencecheck check: " << e.what() << "\n";
  }
  return kExitHarnessOrInput;
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
  cmd->add_option("--out", args->out,
                  "also write the results to this file (a run's own results.json is never rewritten)");
  cmd->add_flag("--json", args->json, "print the results as JSON instead of the summary (writes nothing)");
  cmd->add_option("--format", args->request.format, "history format: jsonl (default) or edn")
      ->check(CLI::IsMember({"jsonl", "edn"}));
  checker_schema().add_cli(*cmd, args->checker_options, /*for_check=*/true);
  cmd->callback([args] { throw CLI::RuntimeError(run_check(*args)); });
}

}  // namespace fencecheck
