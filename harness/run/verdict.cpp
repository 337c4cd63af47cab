#include "harness/run/verdict.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>

#include "checkers/check.h"
#include "harness/run/interrupts.h"
#include "harness/run/run_store.h"
#include "platform/atomic_file.h"
#include "platform/errors.h"
#include "platform/json_text.h"
#include "report/junit.h"
#include "report/run_index.h"
#include "report/run_report.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// report.html, the store's index and --junit. Failing to draw them is reported but changes
// no verdict: everything the run recorded is already on disk, and `fencecheck report` can
// draw it again.
void write_reports(const FinishedRun& run, std::ostream& out, std::ostream& err) {
  try {
    ReportWritten r = write_run_report(run.dir);
    out << "report: " << r.file.string() << "\n";
  } catch (const std::exception& e) {
    err << "fencecheck run: warning: no report.html: " << e.what() << "\n";
  }
  try {
    write_run_index(run.store);
  } catch (const std::exception& e) {
    err << "fencecheck run: warning: the run index was not updated: " << e.what() << "\n";
  }
  if (run.junit.empty()) return;
  try {
    write_junit(run.junit, {JunitSuite{run.name, {junit_run(run.dir)}}});
  } catch (const std::exception& e) {
    err << "fencecheck run: warning: --junit " << run.junit << ": " << e.what() << "\n";
  }
}

// Writes results.json and prints the summary; returns the exit code.
int publish(const FinishedRun& run, const RunRecord& record, CheckReport report, const CheckRequest& req,
            std::ostream& out, std::ostream& err) {
  Results results = make_results(std::move(report), RunOrigin::kFinishedRun, record);
  write_file_atomically(run.dir / "results.json", dump_json(results.to_json(req), 2) + "\n");
  update_latest(run.store, run.dir);
  out << results.summary() << "verdict: " << to_string(results.verdict()) << " (" << run.dir.string()
      << "; rerun with " << (run.dir / "repro.sh").string() << ")\n"
      << std::flush;
  write_reports(run, out, err);
  return results.exit_code();
}

// Why the process ends here rather than returning: the checkers run on a std::async
// thread, which nothing can stop from outside (a linearizability search may take its whole
// --linear-time-limit), and the destructor of a std::async future waits for that thread.
// Returning would make the second Ctrl-C wait for the very search it means to abandon;
// std::exit would run static destructors under the still-running checker. Everything of
// the run is torn down and written, so the process leaves with std::_Exit, after flushing
// what it printed.
[[noreturn]] void leave_checkers_running(int code, std::ostream& out, std::ostream& err) {
  out.flush();
  err.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace

int judge_and_publish(const FinishedRun& run, RunRecord& record, std::ostream& out, std::ostream& err) {
  CheckRequest req;
  req.history = (run.dir / "history.jsonl").string();
  if (fs::exists(run.dir / "resource.jsonl")) req.resource = (run.dir / "resource.jsonl").string();
  req.checkers = run.checkers;
  req.options = run.check_options;
  try {
    if (interrupts() >= 2) {
      record.checks_skipped = true;
      out << "fencecheck run: interrupted again: the checkers are skipped; the history is kept\n";
      return publish(run, record, CheckReport{}, req, out, err);
    }
    // The checkers run beside this thread, which keeps listening for a second Ctrl-C.
    auto checks = std::async(std::launch::async, [req] { return run_checks(req); });
    while (checks.wait_for(milliseconds(50)) != std::future_status::ready) {
      if (interrupts() >= 2) break;
    }
    if (interrupts() < 2 || checks.wait_for(milliseconds(0)) == std::future_status::ready) {
      return publish(run, record, checks.get(), req, out, err);
    }
    record.checks_skipped = true;
    out << "fencecheck run: interrupted again: the checkers are stopped; the history is kept\n";
    leave_checkers_running(publish(run, record, CheckReport{}, req, out, err), out, err);
  } catch (const std::exception& e) {
    err << "fencecheck run: checking " << req.history << ": " << e.what() << "\n";
    return kExitHarnessOrInput;
  }
}

}  // namespace fencecheck
