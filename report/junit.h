// JUnit XML of fencecheck results, in the shape CI servers read (Jenkins/Ant's
// junit-10.xsd: testsuites / testsuite(name, tests, failures, errors, skipped, time) /
// testcase(name, classname, time) / skipped | error | failure). tests/report/junit-10.xsd
// is that shape; the tests validate against it.
//
// One <testsuite> per suite — a run (`fencecheck report --junit`) or a scenario of several
// runs (`fencecheck suite`) — and in it one <testcase> per checker per run, classname
// the run:
//   valid → passed; invalid → <failure message="the first violation"> whose text is the
//   count (the checker's count_text when it has one, e.g. "4 holds overlapped by 128
//   acquires") and the listed violations; unknown → <error>;
//   skipped → <skipped> (a scenario run instead has one testcase "prediction", see
//   JunitRun); plus a testcase "run" that is an <error> when the run itself is
//   undecided (results.json's unknown_reasons: a bench problem, an interruption), when it
//   has no results.json (unfinished) or when its results cannot be read.
// Everything is XML-escaped. Pure functions (write_junit writes one file atomically and
// throws std::runtime_error naming it on failure); thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

struct JunitRun {
  std::string name;                     // the testcases' classname, e.g. "K1.20261201T220213.402Z"
  std::filesystem::path run_dir;        // shown in system-out; may be empty
  std::optional<nlohmann::json> results;  // the results document; nullopt: none
  std::string problem;                  // why there are no results (unfinished, unreadable: …)
  // A scenario run (`fencecheck suite kleppmann`): judged by its prediction, not by its
  // checkers — a violation the scenario predicts is a pass. Then the run has one testcase
  // "prediction" (a <failure> listing `prediction_misses` when there are any) with the
  // checkers' verdicts in its system-out, instead of a testcase per checker.
  bool judged_by_prediction = false;
  std::vector<std::string> prediction_misses;
};

struct JunitSuite {
  std::string name;
  std::vector<JunitRun> runs;
};

// A run as JunitRun from its directory: its results.json (or `results`), or why not.
// Never throws for the run's content.
JunitRun junit_run(const std::filesystem::path& run_dir,
                   const std::optional<std::filesystem::path>& results = std::nullopt);

// One <testsuite> element.
std::string junit_suite(const JunitSuite& suite);
// The whole document: <?xml …?><testsuites …> with one testsuite per suite.
std::string junit_xml(const std::vector<JunitSuite>& suites);
void write_junit(const std::filesystem::path& file, const std::vector<JunitSuite>& suites);

}  // namespace fencecheck
