// Runs the real binary: `fencecheck report` and `fencecheck index` — what they print,
// write and exit with, for good and bad input.
#include <gtest/gtest.h>

#include "tests/report/report_fixture.h"
#include "tests/support/command.h"

namespace fencecheck::testing {
namespace {

CommandResult fencecheck(const std::string& args) { return run_command(std::string(FENCECHECK_BIN) + " " + args); }

fs::path judged_run(const HistoryBuilder& h) {
  fs::path dir = fs::path(h.dir()) / "results" / "redis-lock" / "20261201T100000.000Z";
  fs::create_directories(dir);
  fs::copy_file(fs::path(FENCECHECK_SOURCE_DIR) / "tests/data/example-run/history.jsonl", dir / "history.jsonl");
  fs::copy_file(fs::path(FENCECHECK_SOURCE_DIR) / "tests/data/example-run/resource.jsonl", dir / "resource.jsonl");
  spit(dir / "config.json", test_config("redis-lock").dump());
  judge(dir);
  return dir;
}

TEST(ReportCli, WritesTheReportAndJunitAndPrintsThePath) {
  HistoryBuilder h;
  fs::path dir = judged_run(h);
  const std::string results = slurp(dir / "results.json");
  auto r = fencecheck("report " + dir.string() + " --junit " + h.dir() + "/junit.xml");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind((dir / "report.html").string() + " (20 events", 0), 0u) << r.out;
  EXPECT_TRUE(fs::exists(dir / "report.html"));
  EXPECT_NE(slurp(h.dir() + "/junit.xml").find("<failure"), std::string::npos);
  EXPECT_EQ(slurp(dir / "results.json"), results);

  auto index = fencecheck("index " + h.dir() + "/results");
  EXPECT_EQ(index.code, 0) << index.out;
  EXPECT_NE(index.out.find("index.html (1 run)"), std::string::npos) << index.out;
}

TEST(ReportCli, APathThatIsNotARunDirectoryExits3NamingIt) {
  HistoryBuilder h;
  auto r = fencecheck("report " + h.dir() + "/nowhere");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find(h.dir() + "/nowhere:0: not a run directory"), std::string::npos) << r.out;
  r = fencecheck("report " + h.dir());
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("it has no history.jsonl"), std::string::npos) << r.out;
  r = fencecheck("index " + h.dir() + "/no-store");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("fencecheck index: " + h.dir() + "/no-store: not a directory"), std::string::npos) << r.out;
}

TEST(ReportCli, AMalformedHistoryExits3WithFileLineAndField) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1);
  h.raw(R"({"index":2,"process":1,"type":"invoke","f":"release","key":"l0","value":{"token":1}})");
  h.history_path();
  const std::string before = slurp(h.dir() + "/history.jsonl");
  auto r = fencecheck("report " + h.dir());
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("history.jsonl:3: field 'time'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(h.dir() + "/report.html"));
  EXPECT_EQ(slurp(h.dir() + "/history.jsonl"), before);
}

TEST(ReportCli, RefusesToWriteOverTheRunsOwnFiles) {
  HistoryBuilder h;
  fs::path dir = judged_run(h);
  const std::string history = slurp(dir / "history.jsonl");
  auto r = fencecheck("report " + dir.string() + " --out " + (dir / "history.jsonl").string());
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("never overwrites"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(dir / "history.jsonl"), history);
}

}  // namespace
}  // namespace fencecheck::testing
