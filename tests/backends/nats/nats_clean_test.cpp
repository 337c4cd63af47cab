// A controller SIGKILLed in the middle of a nats run, then `fencecheck clean`: no
// nats-server of the run may be left; their stores and logs stay as the run's record.
#include <unistd.h>

#include <fstream>

#include "tests/integration/run_fixture.h"
#include "tests/integration/run_processes.h"

namespace fencecheck::testing {
namespace {

class NatsCleanTest : public RunTest {
 protected:
  void SetUp() override {
    if (::system("command -v nats-server >/dev/null || test -x /usr/sbin/nats-server") != 0) {
      if (std::getenv("CI") != nullptr) FAIL() << "nats-server is not installed (CI must run scripts/setup.sh)";
      GTEST_SKIP() << "nats-server is not installed (scripts/setup.sh installs it)";
    }
    RunTest::SetUp();
  }
};

TEST_F(NatsCleanTest, ControllerKilledThenCleanLeavesNoServer) {
  pid_t controller = spawn_run({"--backend", "nats", "--nemesis", "none", "--time-limit", "60"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 60)) << "the run never got going:\n" << controller_log();
  std::map<int, std::string> processes = descendants(controller);
  int servers = 0;
  for (const auto& [pid, start] : processes) servers += comm(pid) == "nats-server" ? 1 : 0;
  EXPECT_EQ(servers, 3) << "three nats-servers under the controller";
  std::optional<std::string> run_id = run_id_of_controller(controller);
  ASSERT_TRUE(run_id.has_value()) << "no state file for the run";

  kill_controller_then_clean(controller, *run_id, FENCECHECK_BIN, processes);
  for (const std::string n : {"n1", "n2", "n3"}) {
    EXPECT_TRUE(fs::exists(run_dir() / "nodes" / n / "nats.log")) << n << ": the log is the run's record";
  }
}

// The same with each node's store on fclazydisk: the killed controller leaves three FUSE
// daemons and their mounts; clean kills the daemons and detaches the mounts.
TEST_F(NatsCleanTest, ControllerKilledThenCleanDetachesTheNodesDisks) {
  if (::geteuid() != 0) GTEST_SKIP() << "fclazydisk mounts need root";
  pid_t controller = spawn_run({"--backend", "nats", "--backend-opt", "crash_loses=unsynced", "--nemesis", "none",
                                "--time-limit", "60"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 60)) << "the run never got going:\n" << controller_log();
  std::map<int, std::string> processes = descendants(controller);
  int disks = 0;
  for (const auto& [pid, start] : processes) disks += comm(pid) == "fclazydisk" ? 1 : 0;
  EXPECT_EQ(disks, 3) << "a disk per node";
  std::optional<std::string> run_id = run_id_of_controller(controller);
  ASSERT_TRUE(run_id.has_value());
  ASSERT_FALSE(run_dir().empty());
  std::string clean = kill_controller_then_clean(controller, *run_id, FENCECHECK_BIN, processes);
  EXPECT_NE(clean.find("unmounted"), std::string::npos) << clean;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    EXPECT_EQ(line.find(fs::absolute(run_dir()).string()), std::string::npos) << "left mounted: " << line;
  }
  EXPECT_TRUE(fs::exists(run_dir() / "nodes" / "n1" / "disk" / "jetstream")) << "the disk's backing stays";
}

}  // namespace
}  // namespace fencecheck::testing
