// The run index (report/run_index.h): every run of a store listed with its verdict and a
// relative link; unfinished and malformed runs are shown as such, never thrown on.
#include <gtest/gtest.h>

#include "report/run_index.h"
#include "report/run_report.h"
#include "tests/report/report_fixture.h"

namespace fencecheck::testing {
namespace {

// A run directory <store>/<name>/<stamp>/ with config.json and what `results` says.
fs::path add_run(const fs::path& store, const std::string& name, const std::string& stamp, const std::string& results,
                 const std::string& config = "") {
  fs::path dir = store / name / stamp;
  fs::create_directories(dir / "nodes" / "n1");
  spit(dir / "config.json", config.empty() ? test_config(name).dump() : config);
  spit(dir / "history.jsonl",
       R"({"index":0,"time":1,"process":1,"type":"invoke","f":"acquire","key":"l0","value":null,"node":"c1"})"
       "\n");
  if (!results.empty()) spit(dir / "results.json", results);
  return dir;
}

class RunIndex : public ::testing::Test {
 protected:
  HistoryBuilder tmp;
  fs::path store = fs::path(tmp.dir()) / "results";
};

TEST_F(RunIndex, ListsEveryRunNewestFirstWithVerdictsAndRelativeLinks) {
  fs::path valid = add_run(store, "redis-lock-none-fenced", "20261201T100000.000Z", R"({"valid": true, "checkers": {}})");
  add_run(store, "redis-lock-append-pause-holder-unfenced", "20261201T110000.000Z", R"({"valid": false, "checkers": {}})");
  add_run(store, "redis-lock-append-pause-holder-unfenced", "20261201T120000.000Z", "");  // still running / killed
  write_run_report(valid);
  fs::create_directory_symlink(valid, store / "latest");  // not listed twice
  IndexWritten w = write_run_index(store);
  EXPECT_EQ(w.file, store / "index.html");
  EXPECT_EQ(w.runs, 3u);
  EXPECT_EQ(w.unreadable, 0u);
  EXPECT_EQ(w.without_report, 2u);
  const std::string html = slurp(w.file);
  EXPECT_EQ(count_of(html, "<tr><td><a href="), 3u);
  EXPECT_NE(html.find("<a href=\"redis-lock-none-fenced/20261201T100000.000Z/report.html\">"), std::string::npos) << html;
  EXPECT_NE(html.find("<a href=\"redis-lock-append-pause-holder-unfenced/20261201T120000.000Z/\">"), std::string::npos);
  auto unfinished = html.find(">unfinished<"), invalid = html.find(">invalid<"), ok = html.find(">valid<");
  ASSERT_NE(unfinished, std::string::npos);
  EXPECT_LT(unfinished, invalid) << "newest first";
  EXPECT_LT(invalid, ok);
  EXPECT_NE(html.find("2026-12-01 12:00:00 UTC"), std::string::npos);
  EXPECT_NE(html.find("<td>redis</td><td>pause-holder</td>"), std::string::npos);
}

TEST_F(RunIndex, AMalformedRunIsUnreadableWithTheReasonAndTheOthersStillListed) {
  add_run(store, "good", "20261201T100000.000Z", R"({"valid": true})");
  add_run(store, "bad-results", "20261201T110000.000Z", "{\"valid\": tru");
  add_run(store, "bad-verdict", "20261201T120000.000Z", R"({"valid": "maybe"})");
  add_run(store, "bad-config", "20261201T130000.000Z", R"({"valid": true})", R"({"nemesis": "pause"})");
  add_run(store, "not-json-config", "20261201T140000.000Z", "", "\x01\x02");
  std::vector<report::RunSummary> runs;
  ASSERT_NO_THROW(runs = find_runs(store));
  ASSERT_EQ(runs.size(), 5u);
  IndexWritten w = write_run_index(store);
  EXPECT_EQ(w.unreadable, 4u);
  const std::string html = slurp(w.file);
  EXPECT_EQ(count_of(html, ">unreadable<"), 4u);
  EXPECT_NE(html.find("bad-results/20261201T110000.000Z/results.json:1: not valid JSON"), std::string::npos) << html;
  EXPECT_NE(html.find("field &#39;valid&#39;: must be true, false or &quot;unknown&quot;"), std::string::npos) << html;
  EXPECT_NE(html.find("field &#39;nemesis&#39;: must be a list of strings"), std::string::npos) << html;
  EXPECT_NE(html.find(">valid<"), std::string::npos);
}

TEST_F(RunIndex, AnEmptyStoreSaysSoAndAMissingOneIsAnError) {
  fs::create_directories(store);
  EXPECT_EQ(write_run_index(store).runs, 0u);
  EXPECT_NE(slurp(store / "index.html").find("No runs yet"), std::string::npos);
  EXPECT_THROW(write_run_index(store / "nope"), std::runtime_error);
}

}  // namespace
}  // namespace fencecheck::testing
