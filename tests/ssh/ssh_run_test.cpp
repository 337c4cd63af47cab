// `--runtime ssh` end to end on the fixture's hosts (label `integration`): Kleppmann's K1,
// K5 and K6 give the verdicts they have on netns (K5 needs its majority killed at once and
// restarted within a hold: the kills run in parallel and a restart makes no directory
// again); a SIGKILLed controller's run is removed from
// every host by `fencecheck clean --nodes-file`; preflight passes there and names a bad line;
// a run with too few hosts is refused with exit 3.
#include <gtest/gtest.h>

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

TEST_F(SshRun, KleppmannK1K5K6HaveTheirNetnsVerdicts) {
  auto r = run_command("timeout 900 " + std::string(FENCECHECK_BIN) + " suite kleppmann" + ssh_args() +
                       " --only K1,K5,K6 --store " + store_);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("3 of 3 run(s) as predicted"), std::string::npos) << r.out;
  EXPECT_EQ(what_runs_left_on_hosts(), "");
}

TEST_F(SshRun, ControllerSigkillThenCleanLeavesNothingOnAnyHost) {
  pid_t pid = spawn_run({"--runtime", "ssh", "--nodes-file", fixture_nodes_file(), "--backend", "redis", "--nemesis",
                         "partition-holder", "--nemesis-interval", "500", "--time-limit", "60", "--resource", "fenced"});
  ASSERT_TRUE(wait_for_history("\"partition-holder\"")) << controller_log();
  ::kill(pid, SIGKILL);
  exit_code(pid);
  EXPECT_NE(what_runs_left_on_hosts(), "") << "the test must start from a run that left something";
  auto r = run_command(std::string(FENCECHECK_BIN) + " clean --nodes-file " + fixture_nodes_file());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("removed run"), std::string::npos) << r.out;
  EXPECT_EQ(what_runs_left_on_hosts(), "") << r.out;
  auto again = run_command(std::string(FENCECHECK_BIN) + " clean --nodes-file " + fixture_nodes_file());
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
