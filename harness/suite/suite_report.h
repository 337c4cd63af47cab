// What a suite leaves in its directory: suite.md (the table, for a README or a ticket),
// suite.html (the same table, self-contained, each run linked to its report.html) and
// suite.json (everything, for scripts). Writes each file atomically; throws HarnessError
// when it cannot. Pure over the SuiteResult otherwise.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/suite/suite_runner.h"

namespace fencecheck {

// kind: "kleppmann" or "matrix", for the titles.
void write_suite_report(const SuiteResult& suite, const std::string& kind, const std::filesystem::path& dir);

// JUnit XML of the suite: one testsuite per case, its runs' checkers as testcases.
void write_suite_junit(const SuiteResult& suite, const std::filesystem::path& file);

// The table as Markdown (what suite.md holds), with links relative to dir.
std::string suite_markdown(const SuiteResult& suite, const std::string& kind, const std::filesystem::path& dir);
nlohmann::json suite_json(const SuiteResult& suite, const std::string& kind);

// Exit code of `fencecheck suite`: 0 every run as its scenario expects (a matrix: every run
// decided), 1 some run broke an expectation (a matrix: some run found a violation), 2 some
// run undecided or the suite interrupted, 3 some run failed as a harness.
int suite_exit_code(const SuiteResult& suite);

}  // namespace fencecheck
