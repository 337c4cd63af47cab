// `fencecheck report RUN_DIR [--junit FILE] [--results FILE] [--out FILE]` writes the run's
// report.html (report/run_report.h) and prints its path; --junit also writes JUnit XML of
// its results. `fencecheck index [STORE]` writes STORE/index.html listing every run
// (report/run_index.h). Both exit 0 when they wrote what they were asked to, 3 otherwise
// (not a run directory, a malformed file — file:line: field — or a file that cannot be
// written), with one message on stderr. Neither ever writes into a run's recorded files.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace fencecheck {

// Adds the "report" and "index" subcommands.
void add_report_commands(CLI::App& app);

struct ReportArgs {
  std::string run_dir;
  std::string junit, results, out;  // empty: not asked for / the default
};
// The commands' bodies, for callers that do not go through CLI11. Return the exit code.
int run_report(const ReportArgs& args, std::ostream& out, std::ostream& err);
int run_index(const std::string& store, std::ostream& out, std::ostream& err);

}  // namespace fencecheck
