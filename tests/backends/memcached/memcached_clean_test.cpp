// A controller SIGKILLed in the middle of a memcached run, then `fencecheck clean`: no
// memcached of the run may be left. memcached keeps nothing on disk; its log stays.
#include <unistd.h>

#include "tests/integration/run_fixture.h"
#include "tests/integration/run_processes.h"

namespace fencecheck::testing {
namespace {

class MemcachedCleanTest : public RunTest {
 protected:
  void SetUp() override {
    if (::system("command -v memcached >/dev/null") != 0) {
      if (std::getenv("CI") != nullptr) FAIL() << "memcached is not installed (CI must run scripts/setup.sh)";
      GTEST_SKIP() << "memcached is not installed (scripts/setup.sh installs it)";
    }
    RunTest::SetUp();
  }
};

TEST_F(MemcachedCleanTest, ControllerKilledThenCleanLeavesNoServer) {
  pid_t controller = spawn_run({"--backend", "memcached", "--nemesis", "none", "--time-limit", "60"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 40)) << "the run never got going:\n" << controller_log();
  std::map<int, std::string> processes = descendants(controller);
  int servers = 0;
  for (const auto& [pid, start] : processes) servers += comm(pid) == "memcached" ? 1 : 0;
  EXPECT_EQ(servers, 1) << "one memcached under the controller";
  std::optional<std::string> run_id = run_id_of_controller(controller);
  ASSERT_TRUE(run_id.has_value()) << "no state file for the run";

  kill_controller_then_clean(controller, *run_id, FENCECHECK_BIN, processes);
  EXPECT_TRUE(fs::exists(run_dir() / "nodes" / "n1" / "memcached.log")) << "the log is the run's record";
}

}  // namespace
}  // namespace fencecheck::testing
