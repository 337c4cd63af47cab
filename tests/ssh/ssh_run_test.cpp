// `--runtime ssh` end to end on the fixture's hosts (label `integration`): Kleppmann's K1
// gives the verdicts it has on netns (the netns scenario tests judge the other rows); a
// majority of Redlock's masters is killed at once and is back within a hold, as K5 needs
// (the kills run in parallel and a restart makes no directory again); a SIGKILLed
// controller's ZooKeeper run is removed from every host by `fencecheck clean --nodes-file`;
// preflight passes there and names a bad line; a run with too few hosts is refused with
// exit 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/integration/run_fixture.h"
#include "tests/ssh/ssh_support.h"

namespace fencecheck::testing {
namespace {

class SshRun : public RunTest {
 protected:
  void SetUp() override {
    FC_REQUIRE_SSH_FIXTURE();
    RunTest::SetUp();
    ASSERT_EQ(what_runs_left_on_hosts(), "") << "an earlier test left this";
  }
  std::string ssh_args() const { return " --runtime ssh --nodes-file " + fixture_nodes_file(); }
};

TEST_F(SshRun, KleppmannK1HasItsNetnsVerdicts) {
  auto r = run_command("timeout 900 " + std::string(FENCECHECK_BIN) + " suite kleppmann" + ssh_args() +
                       " --only K1 --store " + store_);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 of 1 run(s) as predicted"), std::string::npos) << r.out;
  EXPECT_EQ(what_runs_left_on_hosts(), "");
}

// K5's faults over ssh (its verdict is judged on netns): a majority of the masters killed in
// one action, restarted at once and answering again within a hold (600 ms) — what lets a
// second client take the lock while the first still holds it. Timing: run alone (TIMED).
TEST_F(SshRun, AKilledMajorityIsBackWithinAHold) {
  auto r = run("--runtime ssh --nodes-file " + fixture_nodes_file() +
               " --backend redlock --backend-opt n=3 --backend-opt persistence=none --nemesis kill-server"
               " --nemesis-targets majority --restart-ms 0 --nemesis-interval 1000 --hold-ms 600 --time-limit 5");
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.out;
  int kills = 0, restarts = 0;
  double fastest_ms = 1e9;
  std::ifstream in(latest() / "history.jsonl");
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    if (j["process"] != "nemesis") continue;
    if (j["f"] == "kill") {
      ++kills;
      EXPECT_EQ(j["value"]["targets"].size(), 2u) << "a majority of three, in one action: " << line;
    }
    if (j["f"] == "ready") {
      ++restarts;
      fastest_ms = std::min(fastest_ms, j["value"]["waited_ms"].get<double>());
    }
  }
  EXPECT_GE(kills, 2) << r.out;
  EXPECT_GE(restarts, kills - 1) << "a kill whose servers never came back:\n" << r.out;
  EXPECT_LT(fastest_ms, 600) << "no restart answered within a hold";
  EXPECT_EQ(what_runs_left_on_hosts(), "");
}

// ZooKeeper's ensemble over ssh (its configuration uploaded, three JVMs on three hosts), a
// holder cut off, then the controller SIGKILLed: clean removes every process, chain and
// directory of the run from every host.
TEST_F(SshRun, ControllerSigkillThenCleanLeavesNothingOnAnyHost) {
  pid_t pid = spawn_run({"--runtime", "ssh", "--nodes-file", fixture_nodes_file(), "--backend", "zookeeper",
                         "--nemesis", "partition-holder", "--nemesis-interval", "500", "--time-limit", "60",
                         "--resource", "fenced"});
  ASSERT_TRUE(wait_for_history("\"partition-holder\"", 1, std::chrono::seconds(60))) << controller_log();
  // The fault is armed on a schedule, maybe before the first op was served (a CI run under
  // load: 2026-12-04): the test starts from a run that has served some.
  ASSERT_TRUE(wait_for_history("\"type\":\"ok\"", 1, std::chrono::seconds(30))) << "the ensemble served no op\n"
                                                                              << controller_log();
  const std::string run_id = run_id_of_controller(pid).value_or("");
  ASSERT_FALSE(run_id.empty()) << "no state file for the run";
  ::kill(pid, SIGKILL);
  exit_code(pid);
  EXPECT_NE(what_runs_left_on_hosts(run_id), "") << "the test must start from a run that left something";
  // This run only: a global clean would also remove a concurrent test's dead run, or
  // namespaces another test made without a state file.
  const std::string clean = std::string(FENCECHECK_BIN) + " clean --run " + run_id + " --nodes-file " + fixture_nodes_file();
  auto r = run_command(clean);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("removed run"), std::string::npos) << r.out;
  EXPECT_EQ(what_runs_left_on_hosts(run_id), "") << r.out;
  auto again = run_command(clean);
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(again.out.find("removed run"), std::string::npos) << again.out;
}

TEST_F(SshRun, PreflightPassesOnTheFixtureAndNamesABadLine) {
  auto ok = run_command(std::string(FENCECHECK_BIN) + " preflight --nodes-file " + fixture_nodes_file());
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("every host is ready"), std::string::npos) << ok.out;
  const std::string bad = store_ + "/bad.jsonl";
  std::ofstream(bad) << "# one good line, then a typo\n{\"host\": \"10.9.9.1\", \"role\": \"server\"}\n"
                     << "{\"host\": \"10.9.9.2\", \"role\": \"sever\"}\n";
  auto r = run_command(std::string(FENCECHECK_BIN) + " preflight --nodes-file " + bad);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find(bad + ":3: field 'role'"), std::string::npos) << r.out;
}

TEST_F(SshRun, TooFewHostsIsRefusedBeforeAnythingStarts) {
  auto r = run("--runtime ssh --nodes-file " + fixture_nodes_file() + " --backend redis --concurrency 6");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("lists 6 host(s) of role \"client\""), std::string::npos) << r.out;
  EXPECT_EQ(what_runs_left_on_hosts(), "");
}

}  // namespace
}  // namespace fencecheck::testing
