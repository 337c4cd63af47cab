// Runs the real `fencecheck` binary: exit codes and output of `fencecheck check`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/checkers/history_builder.h"
#include "tests/support/command.h"

namespace fencecheck::testing {
namespace {

CommandResult fencecheck(const std::string& args) {
  return run_command(std::string(FENCECHECK_BIN) + " " + args);
}

CommandResult fencecheck_within_20s(const std::string& args) {
  return run_command("timeout -s KILL 20 " + std::string(FENCECHECK_BIN) + " " + args);
}

const std::string kExample = std::string(FENCECHECK_SOURCE_DIR) + "/tests/data/example-run";

TEST(CheckCli, ExampleRunIsInvalidWithExit1) {
  HistoryBuilder tmp;
  auto r = fencecheck("check " + kExample + " --out " + tmp.dir() + "/results.json");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("exclusion     invalid  1 hold overlapped by 1 acquire: process 1 (c1) held l0 from 0.102 s to "
                        "2.110 s while process 2 (c2) acquired it at 1.152 s"),
            std::string::npos)
      << r.out;
  auto results = nlohmann::json::parse(std::ifstream(tmp.dir() + "/results.json"));
  EXPECT_EQ(results["valid"], false);
  EXPECT_EQ(results["checkers"]["tokens"]["valid"], true);
  EXPECT_EQ(results["checkers"]["resource"]["count"], 2);
}

TEST(CheckCli, ValidHistoryDirectoryExits0AndWritesOnlyWhereOutSays) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1).release(1, "l0", 2, 3, 1);
  h.history_path();
  auto r = fencecheck("check " + h.dir());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_FALSE(std::filesystem::exists(h.dir() + "/results.json")) << "check prints; it writes only with --out";
  auto out = fencecheck("check " + h.dir() + " --out " + h.dir() + "/judged.json");
  EXPECT_EQ(out.code, 0) << out.out;
  EXPECT_TRUE(std::filesystem::exists(h.dir() + "/judged.json"));
}

TEST(CheckCli, ARunDirectoryWithoutItsRunBlockDidNotFinishAndIsNeverValid) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1).release(1, "l0", 2, 3, 1);
  h.history_path();
  std::ofstream(h.dir() + "/config.json") << "{}";  // a run directory: made by `fencecheck run`
  auto r = fencecheck("check " + h.dir());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("the run did not finish"), std::string::npos) << r.out;
}

TEST(CheckCli, JsonPrintsResults) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).acquire(2, "l0", 2, 3).nemesis("pause", 4);
  auto r = fencecheck("check " + h.history_path() + " --json --checkers exclusion");
  EXPECT_EQ(r.code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["checkers"]["exclusion"]["count"], 1);
  EXPECT_EQ(j["checkers"]["exclusion"]["acquires_inside"], 1);
  EXPECT_EQ(j["checkers"]["exclusion"]["count_text"], "1 hold overlapped by 1 acquire");
  EXPECT_FALSE(j["checkers"].contains("tokens"));
}

TEST(CheckCli, HistoryWithoutClientOperationsIsUndecidedExit2) {
  HistoryBuilder h;
  h.nemesis("pause", 1);
  auto r = fencecheck("check " + h.history_path());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("undecided: the history has no client operations"), std::string::npos) << r.out;
  HistoryBuilder empty;
  EXPECT_EQ(fencecheck("check " + empty.history_path()).code, 2);
}

TEST(CheckCli, UnknownCheckerIsExit3WithValidNames) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);
  auto r = fencecheck("check " + h.history_path() + " --checkers exclusion,bogus");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("unknown checker \"bogus\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exclusion, tokens, resource"), std::string::npos) << r.out;
}

TEST(CheckCli, MalformedHistoryIsExit3WithFileLineField) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).raw(R"({"index":2,"time":"x","process":1,"type":"invoke","f":"read","key":"k"})");
  auto r = fencecheck("check " + h.history_path());
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("history.jsonl:3: field 'time': must be an integer"), std::string::npos) << r.out;
}

TEST(CheckCli, MissingPathAndUsageErrorsAreExit3) {
  EXPECT_EQ(fencecheck("check /nonexistent/run").code, 3);
  EXPECT_EQ(fencecheck("check").code, 3);
  EXPECT_EQ(fencecheck("bogus-command").code, 3);
}

TEST(CheckCli, JepsenEdnMutexHistories) {
  const std::string data = std::string(FENCECHECK_SOURCE_DIR) + "/tests/edn/data/";
  auto bad = fencecheck("check --format edn " + data + "mutex_invalid.edn --checkers linearizable");
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("not linearizable as a mutex"), std::string::npos) << bad.out;
  auto good = fencecheck("check --format edn " + data + "mutex_valid.edn");
  EXPECT_EQ(good.code, 0) << good.out;
  EXPECT_NE(good.out.find("chosen from the history"), std::string::npos) << good.out;
}

TEST(CheckCli, LinearizableOptions) {
  const std::string edn = std::string(FENCECHECK_SOURCE_DIR) + "/tests/edn/data/mutex_valid.edn";
  auto unknown = fencecheck("check --format edn " + edn + " --model semaphore");
  EXPECT_EQ(unknown.code, 3);
  EXPECT_NE(unknown.out.find("mutex, fenced-mutex, register, cas-register"), std::string::npos) << unknown.out;
  auto forced = fencecheck("check --format edn " + edn + " --model register --checkers linearizable");
  EXPECT_EQ(forced.code, 0) << forced.out;  // no read or write: nothing of that model to judge
  EXPECT_NE(forced.out.find("skipped"), std::string::npos) << forced.out;
  EXPECT_EQ(fencecheck("check --format edn " + edn + " --time-limit -1").code, 3);
  EXPECT_EQ(fencecheck("check --format edn " + edn + " --memory-limit 64M").code, 0);
}

TEST(CheckCli, BadEdnNamesLineAndColumn) {
  HistoryBuilder h;
  std::string path = h.dir() + "/history.edn";
  std::ofstream(path) << "{:type :invoke, :f :acquire, :process 0, :time 1}\n{:type :ok, :f \"unclosed}\n";
  auto r = fencecheck("check --format edn " + path);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("history.edn:2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("column"), std::string::npos) << r.out;
}

TEST(CheckCli, ACutShortRunIsUndecidedNotALostUpdate) {
  HistoryBuilder h;  // a run killed just after a writer's read and write: no final read
  json list = json::array();
  for (std::int64_t i = 0; i < 3; ++i) lock_append_round(h, i + 1, i + 1, list, i * 10.0, i < 2);
  h.history_path();
  h.resource_path();
  std::ofstream(h.dir() + "/config.json") << "{}";
  auto r = fencecheck("check " + h.dir());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("resource      unknown  the lost-update rule of k0 is undecided: the ok write of 30 by "
                       "process 3 (c3) (index 21) completed at 0.025 s, not before the last ok read of k0 was "
                       "invoked (index 19 by process 3 (c3), invoked at 0.022 s)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("undecided: the run did not finish"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: unknown"), std::string::npos) << r.out;
}

// A FIFO as the history, the EDN history, a run's history.jsonl or resource.jsonl, or
// --resource-log: refused at once (opening it would wait for a writer). `timeout` keeps a
// regression from hanging the test: it would end with 137, not 3.
TEST(CheckCli, AFifoIsRefusedAtOnceWithExit3) {
  auto refused = [](const std::string& args, const std::string& fifo) {
    auto r = fencecheck_within_20s(args);
    EXPECT_EQ(r.code, 3) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(fifo + ":0: not a regular file but a FIFO (named pipe)"), std::string::npos)
        << args << "\n" << r.out;
  };
  HistoryBuilder fifos;
  const std::string fifo = fifos.dir() + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  refused("check " + fifo, fifo);
  refused("check --format edn " + fifo, fifo);

  HistoryBuilder run;  // a run directory whose history is a FIFO
  ASSERT_EQ(::mkfifo((run.dir() + "/history.jsonl").c_str(), 0600), 0);
  refused("check " + run.dir(), run.dir() + "/history.jsonl");

  HistoryBuilder log;  // a run directory whose resource log is a FIFO, and --resource-log
  log.acquire(1, "l0", 0, 1, 1);
  log.history_path();
  ASSERT_EQ(::mkfifo((log.dir() + "/resource.jsonl").c_str(), 0600), 0);
  refused("check " + log.dir(), log.dir() + "/resource.jsonl");
  refused("check " + log.history_path() + " --resource-log " + fifo, fifo);

  HistoryBuilder stored;  // a run directory whose stored results.json is a FIFO
  stored.acquire(1, "l0", 0, 1, 1);
  stored.history_path();
  std::ofstream(stored.dir() + "/config.json") << "{}\n";
  ASSERT_EQ(::mkfifo((stored.dir() + "/results.json").c_str(), 0600), 0);
  refused("check " + stored.dir(), stored.dir() + "/results.json");
  // `report` reads the run's config.json.
  HistoryBuilder drawn;
  drawn.acquire(1, "l0", 0, 1, 1);
  drawn.history_path();
  ASSERT_EQ(::mkfifo((drawn.dir() + "/config.json").c_str(), 0600), 0);
  refused("report " + drawn.dir(), drawn.dir() + "/config.json");
}

TEST(CheckCli, HelpAndVersion) {
  auto help = fencecheck("check --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--checkers"), std::string::npos);
  auto v = fencecheck("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("fencecheck "), std::string::npos);
}

TEST(CheckCli, ResultsFileIsNotWrittenOnBadInput) {
  HistoryBuilder h;
  h.raw("not json");
  h.history_path();
  auto r = fencecheck("check " + h.dir());
  EXPECT_EQ(r.code, 3);
  EXPECT_FALSE(std::filesystem::exists(h.dir() + "/results.json"));
}

}  // namespace
}  // namespace fencecheck::testing
