// What a run directory says about itself, for the report, the run index and JUnit: its
// config.json (test name, backend, workload, faults, seed, the command) and its
// results.json (the verdicts), both optional — an unfinished run has no results.json, a
// bare history directory no config.json. Only reads; never writes into the run.
//
// read_run_info() throws InputError naming the file, line and field when a file that is
// there is malformed; summarize_run() never throws for one run's content and says
// "unreadable" with the reason instead (what the index needs). Thread-compatible.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck::report {

struct RunInfo {
  std::filesystem::path dir;
  bool has_config = false;
  std::string name;       // config "name", else the test directory's name
  std::string timestamp;  // the run directory's name, e.g. 20261201T220213.402Z
  std::string backend, workload, resource;
  std::vector<std::string> faults;  // config "nemesis"; empty: none
  std::optional<std::uint64_t> seed;
  std::vector<std::string> command;  // config "command": the `fencecheck run` arguments
  std::string runtime;               // config "runtime"
  // config "unavailable_faults": each fault its runtime could not inject → why.
  std::map<std::string, std::string> unavailable_faults;
  std::optional<nlohmann::json> results;  // results.json (an object), when there is one
  // "valid", "invalid", "unknown", or "unfinished" (no results.json).
  std::string verdict;
};

// JSON of `file`; InputError(file, line, "", what) when it does not parse.
nlohmann::json read_json_file(const std::filesystem::path& file);

// `results` (else dir/results.json, if it exists) and dir/config.json.
RunInfo read_run_info(const std::filesystem::path& dir,
                      const std::optional<std::filesystem::path>& results = std::nullopt);

// The verdict a results document states: "valid", "invalid" or "unknown"; InputError
// naming `file` and field "valid" otherwise.
std::string verdict_of(const nlohmann::json& results, const std::string& file);

struct RunSummary {
  RunInfo info;         // as far as it could be read
  std::string problem;  // non-empty: the run is unreadable, and why (file:line: …)
  std::string verdict() const { return problem.empty() ? info.verdict : "unreadable"; }
};
RunSummary summarize_run(const std::filesystem::path& dir);

// "2026-12-01 22:02:13 UTC" for a run directory name of the store; the name itself when
// it is not a timestamp.
std::string display_time(const std::string& timestamp);

// The faults as a list: "pause-holder, kill-server", or "none".
std::string faults_text(const RunInfo& info);

}  // namespace fencecheck::report
