// What the suite says about a run that is not as predicted (label `unit`): the run's number,
// seed and directory and the checker that broke the prediction, with that checker's own
// summary, on the summary line `fencecheck suite` ends with and in suite.md / suite.json —
// so that a broken prediction seen once in a CI log can be opened again.
#include <gtest/gtest.h>

#include "harness/suite/scenarios.h"
#include "harness/suite/suite_report.h"
#include "harness/suite/suite_summary.h"

namespace fencecheck::testing {
namespace {

using nlohmann::json;

json checker(json valid, const std::string& summary) { return {{"valid", valid}, {"summary", summary}}; }

SuiteRun run_of(const Scenario* s, json results, std::uint64_t seed, const std::string& dir) {
  SuiteRun run;
  run.seed = seed;
  run.run_dir = dir;
  run.results = std::move(results);
  if (s != nullptr) run.verdict = judge_scenario(*s, run.results);
  return run;
}

// K5-delayed expects exclusion and resource valid: run 2 of 3 finds an overlap.
SuiteResult delayed_with_a_false_alarm() {
  const Scenario* s = find_scenario("K5-delayed");
  json good = {{"valid", true},
               {"checkers", {{"exclusion", checker(true, "no overlap")}, {"resource", checker(true, "ok")}}}};
  json bad = {{"valid", false},
              {"checkers",
               {{"exclusion", checker(false, "1 violations, first: c2 held l0 from 5.4 s while c1 acquired it")},
                {"resource", checker(true, "ok")}}}};
  SuiteCase c{"K5-delayed", "t", "claim", s->args, s, "redlock", "kill-server"};
  return {{{c,
            {run_of(s, good, 6000, "/store/runs/K5-delayed/A"), run_of(s, bad, 6001, "/store/runs/K5-delayed/B"),
             run_of(s, good, 6002, "/store/runs/K5-delayed/C")}}},
          false};
}

TEST(SuiteSummary, NamesTheBrokenRunItsDirectoryAndTheCheckerThatBrokeIt) {
  SuiteResult suite = delayed_with_a_false_alarm();
  EXPECT_EQ(suite.rows[0].runs[1].verdict.broken, std::vector<std::string>{"exclusion"});
  const std::string line = suite_summary(suite);
  EXPECT_EQ(line,
            "suite: exit 1 (a prediction broken): 2 of 3 run(s) as predicted; K5-delayed run 2 (seed 6001): "
            "exclusion: expected valid, got invalid (1 violations, first: c2 held l0 from 5.4 s while c1 acquired "
            "it) — /store/runs/K5-delayed/B");
  ASSERT_EQ(suite_problems(suite).size(), 1u);
}

TEST(SuiteSummary, AllAsPredictedSaysSoAndNamesNoRun) {
  SuiteResult suite = delayed_with_a_false_alarm();
  suite.rows[0].runs.erase(suite.rows[0].runs.begin() + 1);
  EXPECT_EQ(suite_summary(suite), "suite: exit 0 (every run as predicted): 2 of 2 run(s) as predicted");
  EXPECT_TRUE(suite_problems(suite).empty());
}

TEST(SuiteSummary, AMissedDetectionNamesTheCheckerThatStayedValid) {
  const Scenario* k1 = find_scenario("K1");
  json miss = {{"valid", false},
               {"checkers",
                {{"exclusion", checker(false, "3 violations")},
                 {"tokens", checker(true, "")},
                 {"resource", checker(true, "40 writes, none lost")}}}};
  SuiteCase c{"K1", "t", "claim", k1->args, k1, "redis", "pause-holder"};
  SuiteResult suite{{{c, {run_of(k1, miss, 1, "/r/K1/x")}}}, false};
  EXPECT_NE(suite_summary(suite).find("K1 run 1 (seed 1): resource: expected invalid, got valid (40 writes, none "
                                      "lost) — /r/K1/x"),
            std::string::npos)
      << suite_summary(suite);
}

TEST(SuiteSummary, TheLineNamesTheRunThatDecidedTheExitCodeAndCountsTheOthers) {
  SuiteResult suite = delayed_with_a_false_alarm();
  const Scenario* s = suite.rows[0].c.scenario;
  json unknown = {{"valid", "unknown"},
                  {"unknown_reasons", {"worker on c3 died"}},
                  {"checkers", {{"exclusion", checker(true, "")}, {"resource", checker(true, "")}}}};
  suite.rows[0].runs.insert(suite.rows[0].runs.begin(), run_of(s, unknown, 5999, "/store/runs/K5-delayed/U"));
  SuiteRun harness;  // no results.json at all
  harness.seed = 6003;
  // What suite_runner keeps of a failed run: its log's tail, cut anywhere, after the progress lines.
  harness.error =
      "exit 3, no results.json; log /store/logs/K5-delayed-5.log: …s] ok 794  fail 378  faults: kill-server n1\n"
      "[ 15.2/20 s] ok 1189  fail 572  info 3  faults: kill-server n1 (starting)\n"
      "fencecheck run: the nemesis failed: cannot shift the clock of n1\n"
      "(faults in force then: kill-server n1 (starting))\n"
      "fencecheck run: what was recorded is in /store/runs/K5-delayed/E\n";
  harness.run_dir = "/store/runs/K5-delayed/E";
  suite.rows[0].runs.push_back(harness);
  ASSERT_EQ(suite_exit_code(suite), 3);
  const std::string line = suite_summary(suite);
  EXPECT_NE(line.find("exit 3 (a run failed as a harness): 2 of 5 run(s) as predicted; K5-delayed run 5 (seed "
                      "6003): harness error: fencecheck run: the nemesis failed: cannot shift the clock of n1 (faults "
                      "in force then: kill-server n1 (starting)) (exit 3; log /store/logs/K5-delayed-5.log) — "
                      "/store/runs/K5-delayed/E; 2 more listed above"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";
  const auto problems = suite_problems(suite);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NE(problems[0].find("K5-delayed run 1 (seed 5999): the run is unknown: worker on c3 died — "
                             "/store/runs/K5-delayed/U"),
            std::string::npos)
      << problems[0];
}

TEST(SuiteSummary, AHarnessErrorOfAnotherFormIsQuotedByItsFirstLine) {
  SuiteResult suite = delayed_with_a_false_alarm();
  suite.rows[0].runs[1] = SuiteRun{};
  suite.rows[0].runs[1].error = "cannot fork a run\nsecond line";
  EXPECT_NE(suite_summary(suite).find("K5-delayed run 2 (seed 0): harness error: cannot fork a run"), std::string::npos)
      << suite_summary(suite);
  suite.rows[0].runs[1].error = "exit 3, no results.json; log /l: ";  // an empty log
  EXPECT_NE(suite_summary(suite).find("harness error:  (exit 3; log /l)"), std::string::npos) << suite_summary(suite);
}

TEST(SuiteSummary, AMatrixCellNamesTheInvalidCheckers) {
  json bad = {{"valid", false},
              {"checkers", {{"exclusion", checker(false, "2 violations")}, {"tokens", checker(true, "ok")}}}};
  SuiteCase c{"redis-pause-holder", "redis × pause-holder", "", {}, nullptr, "redis", "pause-holder"};
  SuiteResult suite{{{c, {run_of(nullptr, bad, 9, "/m/1")}}}, false};
  EXPECT_EQ(suite_summary(suite), "suite: exit 1 (a violation found): 0 of 1 run(s) valid; redis-pause-holder run 1 "
                                  "(seed 9): exclusion invalid (2 violations) — /m/1");
}

TEST(SuiteReport, SuiteMdAndSuiteJsonListTheRunsNotAsPredicted) {
  SuiteResult suite = delayed_with_a_false_alarm();
  const std::string md = suite_markdown(suite, "kleppmann", "/store");
  EXPECT_NE(md.find("## Not as predicted\n\n- K5-delayed run 2 (seed 6001): exclusion: expected valid"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.substr(md.rfind('\n', md.size() - 2) + 1), suite_summary(suite) + "\n") << "the summary ends suite.md";
  json j = suite_json(suite, "kleppmann");
  ASSERT_EQ(j["problems"].size(), 1u);
  EXPECT_EQ(j["summary"], suite_summary(suite));
  EXPECT_EQ(j["rows"][0]["runs"][1]["broken_checkers"], json::array({"exclusion"}));
  EXPECT_EQ(j["rows"][0]["runs"][1]["run_dir"], "/store/runs/K5-delayed/B");
}

TEST(SuiteReport, TheLongestLockOutOfReachIsTheLongestRunsWithTheRunsThatHadOne) {
  SuiteResult suite = delayed_with_a_false_alarm();
  const std::string none = suite_markdown(suite, "kleppmann", "/store");
  EXPECT_NE(none.find("| longest out of reach |"), std::string::npos) << none;
  suite.rows[0].runs[0].out_of_reach_s = 2.5;
  suite.rows[0].runs[0].out_of_reach_refused = 40;
  suite.rows[0].runs[2].out_of_reach_s = 15.7;
  suite.rows[0].runs[2].out_of_reach_refused = 1074;
  const std::string md = suite_markdown(suite, "kleppmann", "/store");
  EXPECT_NE(md.find("15.70 s, 1074 refused (2/3 runs)"), std::string::npos) << md;
  json j = suite_json(suite, "kleppmann");
  EXPECT_EQ(j["rows"][0]["runs"][2]["out_of_reach_s"], 15.7);
  EXPECT_EQ(j["rows"][0]["runs"][1]["out_of_reach_s"], json());
}

TEST(SuiteSummary, ALongOrMultiLineCheckerSummaryStaysOnOneShortLine) {
  SuiteResult suite = delayed_with_a_false_alarm();
  std::string long_summary = "first\nsecond " + std::string(400, 'x') + "é";
  suite.rows[0].runs[1].results["checkers"]["exclusion"]["summary"] = long_summary;
  const std::string line = suite_summary(suite);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("(first second xxx"), std::string::npos) << line;
  EXPECT_LT(line.size(), 500u);
}

}  // namespace
}  // namespace fencecheck::testing
