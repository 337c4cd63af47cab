// The end of `fencecheck run`, once its processes are gone: the checkers over what the run
// recorded (history.jsonl, resource.jsonl), then publishing — results.json, the summary on
// stdout, report.html, the store's index and --junit. Returns the run's exit code (docs/
// results.md): 0 valid, 1 invalid, 2 unknown, 3 when the history cannot be checked.
//
// Blocks for as long as the checkers take. It polls interrupts() (harness/run/interrupts.h):
// a second Ctrl-C before the checks start skips them; one while they run abandons them and
// ENDS THE PROCESS with std::_Exit after publishing (see leave_checkers_running() in
// verdict.cpp). Failing to draw report.html, the index or --junit is a warning on err and
// changes no verdict: results.json is written first, and `fencecheck report` can redraw.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "checkers/checker.h"
#include "harness/results.h"

namespace fencecheck {

struct FinishedRun {
  std::filesystem::path dir;  // the run directory
  std::string store;          // --store: its latest link and index are updated
  std::string name;           // the test name (the JUnit suite's)
  std::string junit;          // --junit file, or empty
  std::vector<std::string> checkers;  // those the workload's ops call for
  CheckOptions check_options;         // --model, --linear-time-limit, --linear-memory-limit
};

// record: the run block; checks_skipped is set when a second Ctrl-C stops the checkers.
int judge_and_publish(const FinishedRun& run, RunRecord& record, std::ostream& out, std::ostream& err);

}  // namespace fencecheck
