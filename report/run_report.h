// report.html: one self-contained HTML file (inline CSS and script, nothing fetched) that
// shows a run — its header and verdict, the checkers' table, a timeline of every op, hold
// and fault with each violation linked to the spans it names, the linearizability
// explanation, and liveness figures — made from the run directory's history.jsonl,
// resource.jsonl (optional), results.json (optional: an unfinished run has none) and
// config.json (optional).
//
// The run's own files are only read, never written. The report is written atomically
// (platform/atomic_file.h): a reader sees the old report or the new one. Everything from
// the run is escaped; the data the script draws is embedded as compact JSON, so a history
// of 100k+ events stays a few MB and draws in a browser in well under a second.
//
// Errors: a path without history.jsonl is not a run directory (InputError naming the
// path); a malformed history, resource log, config.json or results.json is an InputError
// naming file, line and field; a report that cannot be written is a std::runtime_error
// naming the path. Thread-compatible: separate calls share nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace fencecheck {

struct ReportOptions {
  // Verdicts to show instead of the run's own results.json (e.g. `fencecheck check --out`).
  std::optional<std::filesystem::path> results;
  // Where to write; default <run_dir>/report.html.
  std::optional<std::filesystem::path> out;
};

struct ReportWritten {
  std::filesystem::path file;
  std::uint64_t events = 0;      // history lines drawn
  std::uint64_t violations = 0;  // violations listed
  std::uint64_t bytes = 0;       // size of the file
  double seconds = 0;            // time to read the run and write the report
};

ReportWritten write_run_report(const std::filesystem::path& run_dir, const ReportOptions& options = {});

// Throws std::invalid_argument when `out` is one of the files a run recorded
// (history.jsonl, resource.jsonl, results.json, config.json, repro.sh) of run_dir: nothing
// the user recorded is ever rewritten, whatever a report's or JUnit's --out says.
void refuse_recorded_file(const std::filesystem::path& run_dir, const std::filesystem::path& out);

// The HTML text write_run_report writes (same errors, writes nothing).
std::string render_run_report(const std::filesystem::path& run_dir, const ReportOptions& options = {});

}  // namespace fencecheck
