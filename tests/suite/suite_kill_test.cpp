// A `fencecheck suite` killed outright (SIGKILL) takes its run in progress with it, and the
// run's servers and workers die with the run: before the run had PR_SET_PDEATHSIG, both
// went on until the end of their test. Then `fencecheck clean` removes what the run had
// recorded.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/run_fixture.h"
#include "tests/integration/run_processes.h"

namespace fencecheck::testing {
namespace {

class SuiteKillTest : public RunTest {};

TEST_F(SuiteKillTest, KilledSuiteLeavesNoRunGoing) {
  pid_t suite = ::fork();
  ASSERT_GE(suite, 0);
  if (suite == 0) {
    std::string out = store_ + "/suite.log";
    ::freopen(out.c_str(), "w", stdout);
    ::dup2(STDOUT_FILENO, STDERR_FILENO);
    ::execl(FENCECHECK_BIN, FENCECHECK_BIN, "suite", "matrix", "--backends", "redis", "--faults", "none",
            "--time-limit", "60", "--store", store_.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Under way: the run's history has client ops.
  ASSERT_TRUE(wait_for_history("\"ok\"", 20)) << "the suite's run never got going";
  pid_t run = child_with(suite, " run ");
  ASSERT_NE(run, 0) << "no `fencecheck run` under the suite";
  std::map<int, std::string> processes = descendants(suite);
  bool has_server = false;
  for (const auto& [pid, start] : processes) has_server |= comm(pid) == "redis-server";
  ASSERT_TRUE(has_server) << "no redis-server under the suite's run";
  std::optional<std::string> run_id = run_id_of_controller(run);

  ::kill(suite, SIGKILL);
  ::waitpid(suite, nullptr, 0);
  for (const auto& p : survivors(processes)) ADD_FAILURE() << "process " << p << " outlived the killed suite";

  // The run dies of its parent-death signal a moment after the suite: `clean` skips a run
  // whose controller still lives, so wait for it first (it left this run's namespaces
  // behind when it raced).
  for (int i = 0; i < 500 && ::kill(run, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(run_id) << "the run's state file was not found";
  auto clean = run_command(std::string(FENCECHECK_BIN) + " clean --run " + *run_id);
  EXPECT_EQ(clean.code, 0) << clean.out;
  EXPECT_FALSE(std::filesystem::exists("/run/fencecheck/" + *run_id + ".json")) << clean.out;
}

}  // namespace
}  // namespace fencecheck::testing
