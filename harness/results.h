// The one results model of fencecheck: results.json is built here, for `fencecheck run`
// and for `fencecheck check` alike, from the checkers' CheckReport and — for a run — the
// run block (RunRecord), by the same rules:
//
//  - a bench problem (a process that died or hung when no fault caused it, a client that
//    had to stop, a stall) and an interrupted test each make the run at best `unknown`;
//  - a run directory without a run block (the controller was killed, or the run is still
//    going) is unfinished, so at best `unknown` too;
//  - invalid stays invalid whatever else happened: a violation in what was recorded is real.
//
// `fencecheck check RUN_DIR` reads the stored run block back (read_run_record), so that
// re-judging a stored run can never turn its `unknown` into `valid`. Pure functions over
// values; thread-compatible.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/check.h"

namespace fencecheck {

// The "run" block of results.json: how the run went, as the controller saw it.
struct RunRecord {
  std::uint64_t seed = 0;
  double setup_seconds = 0, test_seconds = 0, teardown_seconds = 0;
  // CPU (user + system) the controller process itself spent during the test phase: its
  // client threads, nemesis and bookkeeping; not the workers, servers or resource.
  double controller_cpu_seconds = 0;
  bool interrupted = false;     // Ctrl-C/SIGTERM ended the test before its time limit
  bool checks_skipped = false;  // a second Ctrl-C skipped the checkers
  nlohmann::json health = nlohmann::json::object();  // BenchHealth::to_json()

  // Why this run cannot be valid: its bench problems, its interruption, skipped checks.
  std::vector<std::string> unknown_reasons() const;
  nlohmann::json to_json() const;
};

// What is known about the run behind a history.
enum class RunOrigin {
  kHistoryFile,    // a bare history file: no run rules apply
  kFinishedRun,    // a run with its run block
  kUnfinishedRun,  // a run directory without a run block
};

struct Results {
  CheckReport report;  // unknown_reasons include the run's
  RunOrigin origin = RunOrigin::kHistoryFile;
  std::optional<RunRecord> run;  // kFinishedRun only

  Verdict verdict() const { return report.overall(); }
  int exit_code() const { return report.exit_code(); }
  // The whole results.json document.
  nlohmann::json to_json(const CheckRequest& request) const;
  // The checkers' lines, then what made the run undecided, then warnings.
  std::string summary() const;
};

// Applies the rules above. `run` must be set exactly for kFinishedRun.
Results make_results(CheckReport report, RunOrigin origin, std::optional<RunRecord> run);

// The run block stored in a run directory's results.json: nullopt when the file or its
// "run" block is missing. Throws InputError naming the file and field when it is there but
// malformed.
std::optional<RunRecord> read_run_record(const std::filesystem::path& results_json);

}  // namespace fencecheck
