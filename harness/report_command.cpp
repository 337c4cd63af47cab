#include "harness/report_command.h"

#include <cstdio>
#include <iostream>
#include <memory>

#include "platform/errors.h"
#include "report/junit.h"
#include "report/run_index.h"
#include "report/run_report.h"

namespace fencecheck {

namespace fs = std::filesystem;

int run_report(const ReportArgs& a, std::ostream& out, std::ostream& err) {
  try {
    ReportOptions options;
    if (!a.results.empty()) options.results = a.results;
    if (!a.out.empty()) options.out = a.out;
    ReportWritten w = write_run_report(a.run_dir, options);
    char figures[128];
    std::snprintf(figures, sizeof figures, "%llu events, %llu violations listed, %.1f MB, %.2f s",
                  static_cast<unsigned long long>(w.events), static_cast<unsigned long long>(w.violations),
                  static_cast<double>(w.bytes) / 1e6, w.seconds);
    out << w.file.string() << " (" << figures << ")\n";
    if (!a.junit.empty()) {
      refuse_recorded_file(a.run_dir, a.junit);
      JunitRun run = junit_run(a.run_dir, options.results);
      write_junit(a.junit, {JunitSuite{run.name, {run}}});
      out << a.junit << " (JUnit)\n";
    }
    return 0;
  } catch (const std::exception& e) {
    err << "fencecheck report: " << e.what() << "\n";
  }
  return kExitHarnessOrInput;
}

int run_index(const std::string& store, std::ostream& out, std::ostream& err) {
  try {
    IndexWritten w = write_run_index(store);
    out << w.file.string() << " (" << w.runs << (w.runs == 1 ? " run" : " runs");
    if (w.unreadable != 0) out << ", " << w.unreadable << " unreadable";
    if (w.without_report != 0) out << ", " << w.without_report << " without report.html (fencecheck report RUN_DIR)";
    out << ")\n";
    return 0;
  } catch (const std::exception& e) {
    err << "fencecheck index: " << e.what() << "\n";
  }
  return kExitHarnessOrInput;
}

void add_report_commands(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* report = app.add_subcommand("report", "Write a run's report.html: verdicts, timeline, violations, liveness");
  report->add_option("run_dir", args->run_dir, "run directory (history.jsonl, results.json, config.json …)")->required();
  report->add_option("--junit", args->junit, "also write JUnit XML of the run's verdicts to this file");
  report->add_option("--results", args->results,
                     "show these results (e.g. from `fencecheck check --out`) instead of the run's results.json");
  report->add_option("--out", args->out, "write the report here instead of RUN_DIR/report.html");
  report->callback([args] { throw CLI::RuntimeError(run_report(*args, std::cout, std::cerr)); });

  auto store = std::make_shared<std::string>("results");
  CLI::App* index = app.add_subcommand("index", "Write STORE/index.html listing every run in the store");
  index->add_option("store", *store, "run store")->capture_default_str();
  index->callback([store] { throw CLI::RuntimeError(run_index(*store, std::cout, std::cerr)); });
}

}  // namespace fencecheck
