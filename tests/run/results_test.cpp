// The one results model: the rules that keep a broken or cut-short run from reading as
// valid, the run block's round trip through results.json, and malformed stored blocks.
#include "harness/results.h"

#include <gtest/gtest.h>

#include <fstream>

#include "platform/errors.h"
#include "tests/run/temp_dir.h"

namespace fencecheck::testing {
namespace {

CheckReport report_with(Verdict v) {
  CheckReport r;
  CheckResult c;
  c.verdict = v;
  r.results.emplace_back("exclusion", c);
  r.client_events = 10;
  return r;
}

RunRecord record() {
  RunRecord r;
  r.seed = 7;
  r.health = {{"sound", true}, {"problems", nlohmann::json::array()}, {"warnings", {"most ops failed"}}};
  return r;
}

TEST(Results, AValidFinishedRunStaysValid) {
  Results r = make_results(report_with(Verdict::kValid), RunOrigin::kFinishedRun, record());
  EXPECT_EQ(r.verdict(), Verdict::kValid);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NE(r.summary().find("warning: most ops failed"), std::string::npos) << r.summary();
}

TEST(Results, BenchProblemsInterruptionsAndSkippedChecksAreNeverValid) {
  RunRecord broken = record();
  broken.health["problems"] = {"redis-server on node n1 (pid 9) was killed by signal 9"};
  RunRecord interrupted = record();
  interrupted.interrupted = true;
  RunRecord skipped = record();
  skipped.checks_skipped = true;
  for (const RunRecord& rec : {broken, interrupted, skipped}) {
    Results r = make_results(report_with(Verdict::kValid), RunOrigin::kFinishedRun, rec);
    EXPECT_EQ(r.verdict(), Verdict::kUnknown);
    EXPECT_EQ(r.exit_code(), 2);
    ASSERT_EQ(r.report.unknown_reasons.size(), 1u);
    EXPECT_NE(r.summary().find("undecided: "), std::string::npos);
  }
  EXPECT_NE(make_results(report_with(Verdict::kValid), RunOrigin::kFinishedRun, broken)
                .report.unknown_reasons[0].find("killed by signal 9"),
            std::string::npos);
  // A violation in what was recorded is real whatever else happened.
  EXPECT_EQ(make_results(report_with(Verdict::kInvalid), RunOrigin::kFinishedRun, broken).exit_code(), 1);
}

TEST(Results, AnUnfinishedRunIsAtBestUnknownAndABareHistoryFollowsItsCheckers) {
  Results unfinished = make_results(report_with(Verdict::kValid), RunOrigin::kUnfinishedRun, std::nullopt);
  EXPECT_EQ(unfinished.verdict(), Verdict::kUnknown);
  EXPECT_EQ(unfinished.to_json(CheckRequest{})["run"]["finished"], false);
  EXPECT_EQ(make_results(report_with(Verdict::kValid), RunOrigin::kHistoryFile, std::nullopt).verdict(),
            Verdict::kValid);
}

TEST(Results, TheRunBlockRoundTripsThroughResultsJson) {
  TempDir dir;
  RunRecord rec = record();
  rec.interrupted = true;
  rec.test_seconds = 12.5;
  Results r = make_results(report_with(Verdict::kValid), RunOrigin::kFinishedRun, rec);
  nlohmann::json doc = r.to_json(CheckRequest{});
  EXPECT_EQ(doc["valid"], "unknown");
  EXPECT_EQ(doc["health"]["warnings"][0], "most ops failed");
  EXPECT_FALSE(doc["run"].contains("health")) << "health is its own block";
  std::ofstream(dir.path() / "results.json") << doc.dump(2);
  std::optional<RunRecord> back = read_run_record(dir.path() / "results.json");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->seed, 7u);
  EXPECT_TRUE(back->interrupted);
  EXPECT_EQ(back->test_seconds, 12.5);
  EXPECT_EQ(back->unknown_reasons(), rec.unknown_reasons());
  EXPECT_FALSE(read_run_record(dir.path() / "missing.json"));
}

TEST(Results, AMalformedStoredRunBlockIsBadInputNamingTheFile) {
  TempDir dir;
  auto path = dir.path() / "results.json";
  for (const char* text : {"[1, 2]", R"({"run": {"seed": "seven", "interrupted": false}})",
                           R"({"run": {"seed": 1, "interrupted": false}, "health": {"problems": [3]}})"}) {
    std::ofstream(path) << text;
    try {
      read_run_record(path);
      ADD_FAILURE() << text << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path.string()) << e.what();
    }
  }
  std::ofstream(path) << R"({"valid": true})";
  EXPECT_FALSE(read_run_record(path)) << "no run block: an unfinished run";
}

}  // namespace
}  // namespace fencecheck::testing
