// A broken bench never reads as a safe system (label `integration`): a worker, the lock
// server or the resource service killed mid-run by someone other than the nemesis ends
// the run as `unknown` (exit 2) naming what died, with a bounded history; `check` on a
// stored run never rewrites its results.json; Ctrl-C during a long pause ends at once.
#include <gtest/gtest.h>

#include "tests/integration/run_fixture.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;

struct Victim {
  const char* what;       // the process to kill, as the controller's child command line shows
  const char* named_as;   // how the verdict must name it
};

class KilledBenchProcess : public RunTest, public ::testing::WithParamInterface<Victim> {};

TEST_P(KilledBenchProcess, EndsTheRunUnknownNamingWhatDied) {
  const Victim v = GetParam();
  pid_t controller = spawn_run({"--time-limit", "60", "--nemesis", "none", "--seed", "3"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 50)) << controller_log();
  pid_t victim = child_with(controller, v.what);
  ASSERT_GT(victim, 0) << "no child of the controller runs " << v.what;
  auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  int code = exit_code(controller);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  EXPECT_EQ(code, 2) << controller_log();
  EXPECT_LT(took, 15) << "the run went on long after " << v.what << " died";
  std::string log = controller_log();
  EXPECT_NE(log.find(v.named_as), std::string::npos) << log;
  EXPECT_NE(log.find(" (pid " + std::to_string(victim) + ") was killed by signal 9"), std::string::npos) << log;
  json res = results();
  EXPECT_EQ(res["valid"], "unknown");
  EXPECT_EQ(res["health"]["sound"], false);
  ASSERT_FALSE(res["health"]["processes_died"].empty());
  EXPECT_EQ(res["health"]["processes_died"][0]["pid"], victim);
  // No tight retry loop: a handful of unknown outcomes, not thousands.
  EXPECT_LT(res["health"]["ops"]["info"].get<int>(), 20) << res["health"].dump(2);
  EXPECT_LT(history_lines_containing("\"index\""), 100'000u);
}

INSTANTIATE_TEST_SUITE_P(Bench, KilledBenchProcess,
                         ::testing::Values(Victim{"worker --socket", "worker on node c"},
                                           Victim{"redis-server", "redis-server on node n1"},
                                           Victim{"resource --listen", "resource on node r1"}),
                         [](const auto& info) {
                           std::string w = info.param.what;
                           return w.substr(0, w.find_first_of(" -"));
                         });

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(RunTest, CheckNeverRewritesARunsResults) {
  pid_t controller = spawn_run({"--time-limit", "20", "--nemesis", "none", "--seed", "4"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 20)) << controller_log();
  ::kill(controller, SIGINT);  // an interrupted run: stored as unknown
  ASSERT_EQ(exit_code(controller), 2) << controller_log();
  const fs::path dir = latest();
  const std::string before = read_bytes(dir / "results.json");
  ASSERT_NE(before.find("\"interrupted\": true"), std::string::npos) << before;
  const std::string bin = FENCECHECK_BIN;
  for (const std::string args : {"", " --checkers tokens", " --json"}) {
    auto r = run_command(bin + " check " + dir.string() + args);
    EXPECT_EQ(r.code, 2) << args << ": the stored run is unknown and must stay so\n" << r.out;
    EXPECT_EQ(read_bytes(dir / "results.json"), before) << "check" << args << " rewrote results.json";
  }
  auto own = run_command(bin + " check " + dir.string() + " --out " + (dir / "results.json").string());
  EXPECT_EQ(own.code, 3) << own.out;
  EXPECT_EQ(read_bytes(dir / "results.json"), before);
  auto elsewhere = run_command(bin + " check " + dir.string() + " --out " + store_ + "/again.json");
  EXPECT_EQ(elsewhere.code, 2) << elsewhere.out;
  json again = json::parse(std::ifstream(store_ + "/again.json"));
  EXPECT_EQ(again["valid"], "unknown");
  EXPECT_EQ(again["run"]["interrupted"], true);
}

TEST_F(RunTest, CtrlCDuringALongPauseEndsWithinTwoSeconds) {
  pid_t controller = spawn_run({"--time-limit", "60", "--nemesis", "pause-client", "--pause-ms", "30000",
                                "--nemesis-interval", "500", "--seed", "5"});
  ASSERT_TRUE(wait_for_history("\"f\":\"pause\"")) << controller_log();
  std::this_thread::sleep_for(milliseconds(500));  // well inside the 30 s pause
  auto interrupted_at = std::chrono::steady_clock::now();
  ::kill(controller, SIGINT);
  int code = exit_code(controller);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - interrupted_at).count();
  EXPECT_LT(took, 2.0) << controller_log();
  EXPECT_TRUE(code == 1 || code == 2) << controller_log();
  json res = results();
  EXPECT_EQ(res["run"]["interrupted"], true);
  EXPECT_NE(res["valid"], true);
  EXPECT_GE(history_lines_containing("\"f\":\"resume\""), 1u) << "the pause was not healed";
}

TEST_F(RunTest, SecondCtrlCSkipsTheCheckersAndKeepsTheHistory) {
  pid_t controller = spawn_run({"--time-limit", "60", "--nemesis", "none", "--seed", "6"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 20)) << controller_log();
  ::kill(controller, SIGINT);
  // Signals do not queue: the second Ctrl-C must come after the first was taken, as a
  // person's would.
  for (int i = 0; i < 200 && controller_log().find("interrupted;") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ::kill(controller, SIGINT);
  EXPECT_EQ(exit_code(controller), 2) << controller_log();
  EXPECT_NE(controller_log().find("interrupted again: the checkers are"), std::string::npos)
      << controller_log();
  json res = results();
  EXPECT_EQ(res["valid"], "unknown");
  EXPECT_EQ(res["run"]["checks_skipped"], true);
  EXPECT_TRUE(res["checkers"].empty());
  EXPECT_GT(history_lines_containing("\"ok\""), 0u);
}

}  // namespace
}  // namespace fencecheck::testing
