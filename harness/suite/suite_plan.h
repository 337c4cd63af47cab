// The row contract of a suite (issue 34): a suite is a plan — one row per case × repeat,
// each with everything needed to run it — then every row run on its own (`suite run-row`,
// anywhere: this machine, a Kubernetes Indexed Job's pod, a CI matrix job), then the rows
// collected into the suite's tables (`suite collect`). `fencecheck suite` does the three
// in one process; fanned out, they share only the plan file and the store directory.
//
// A plan is JSON lines (plan.jsonl), one PlanRow each, in the suite's order. A row's id is
// 16 hex digits of FNV-1a over what the row runs: the suite, the case, its `fencecheck
// run` arguments, the lock library's adapter and version (when --client names one), the
// seed and the repeat number. The same suite and options give the same plan, byte for byte.
//
// Pure functions and value types; thread-safe. Errors: std::invalid_argument naming the
// file, line and field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/suite/suite_runner.h"

namespace fencecheck {

struct PlanRow {
  std::string id;        // 16 hex digits
  std::string suite;     // "kleppmann", "matrix"
  std::size_t index = 0;  // its line, from 0: what `run-row --index` names
  SuiteCase c;           // c.scenario set again from suite + case id when read (nullptr for a matrix cell)
  int repeat = 1;        // 1-based
  std::uint64_t seed = 0;
  std::string client_version;  // the adapter's pinned version; empty for fencecheck's own client
};

// The rows of `cases`, each `repeat` times, seeds as run_suite draws them (seed + 1000 k + r).
std::vector<PlanRow> make_plan(const std::string& suite, const std::vector<SuiteCase>& cases, int repeat,
                               std::uint64_t seed);
// One line of plan.jsonl (no newline), and back. parse_plan_line throws std::invalid_argument
// "<where>: field \"args\" …" for a malformed line; `where` is "plan.jsonl:3".
std::string plan_line(const PlanRow& row);
PlanRow parse_plan_line(const std::string& text, const std::string& where);
// The plan's lines, each ended by a newline: plan.jsonl.
std::string plan_text(const std::vector<PlanRow>& plan);
// Reads a whole plan file; throws std::invalid_argument naming the file and line.
std::vector<PlanRow> read_plan(const std::filesystem::path& file);
// The id a row must have: what parse_plan_line checks a line's "id" against.
std::string plan_row_id(const PlanRow& row);

}  // namespace fencecheck
