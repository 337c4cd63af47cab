// Running one row of a suite's plan into a store, and collecting a store's rows into the
// suite's tables (harness/suite/suite_plan.h says what a row is).
//
// The store: <store>/rows/<id>/ per finished row — row.json (the plan line, exit code,
// seconds, where its run is), the run's directory under runs/, its log run.log. A row is
// made in <store>/rows/.partial-<id>-<maker>/ (<maker>: the host, boot, pid namespace and
// pid of the run-row making it) and renamed into place only once row.json is written, so a
// row directory is either absent or complete: a run-row killed at any instant leaves at
// most a .partial- directory, which nothing collects and the next run-row of that row in
// the same pid namespace removes (from elsewhere nothing can tell whether its maker still
// runs: a store shared by pods or machines). A row with a verdict is not run again; one
// whose bench failed (no results.json: "harness error" in the table) or whose run a signal
// cut short (results of a shorter test) is stored without a verdict and run again by the
// next try.
// The run itself lives in <store>/runs/<id>/ (its own store: rows run at once never share a
// `latest`), where it stays, so that its repro.sh names the right place.
//
// Blocking: run_row runs the row's `fencecheck run` to its end (its time limit, setup and
// checks: seconds to minutes); a SIGINT/SIGTERM to the caller is passed on to it once
// (run_suite_child). collect reads files only. Not thread-safe: one call at a time per
// process, from its main thread; several processes may run rows of one store at once.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/suite/suite_plan.h"
#include "harness/suite/suite_runner.h"

namespace fencecheck {

struct RowOutcome {
  bool skipped = false;  // it was complete already (another process's, or an earlier try's)
  bool stored = false;   // a verdict is in the store now (also when skipped): false only when the bench failed
  SuiteRun run;          // what this call ran (not set when skipped)
};

// Runs row into store (created). Throws HarnessError when the store cannot be written.
RowOutcome run_row(const PlanRow& row, const std::filesystem::path& store, const std::filesystem::path& exe);

struct CollectResult {
  std::string suite;  // the plan's suite ("kleppmann"), as its rows say
  SuiteResult result;  // rows grouped by case, in plan order
  // Rows missing (in the plan, not in the store), duplicated (two stored rows for one case
  // and repeat) or foreign (stored, but not in the plan, or of another suite): one sentence
  // each. Empty: the store holds exactly the plan's rows.
  std::vector<std::string> problems;
};

// The stored rows of store; with a plan, checked against it and ordered by it (without, by
// the index each row recorded). With a plan, a store with no rows has every row missing.
// Throws std::invalid_argument for an unreadable row.json (naming the file), a store that
// is not a directory, or a store with no rows and no plan.
// Who makes a partial row: "<host>-<boot>-<pidns>-<pid>" (the first 8 digits of the boot
// id, the pid namespace's inode). Pods and machines sharing a store have overlapping pids,
// so a pid names a process only within one pid namespace of one boot.
std::string row_maker();
// Whether the partial row `maker` made is a dead try's, as run-row `me` sees it: made in
// me's pid namespace (same boot) by a process that is gone, or by an earlier process with
// me's own pid. A partial made elsewhere is never judged dead (false).
bool is_dead_partial(const std::string& maker, const std::string& me, const std::function<bool(int)>& alive);

CollectResult collect_rows(const std::filesystem::path& store, const std::optional<std::vector<PlanRow>>& plan);

}  // namespace fencecheck
