// A controller SIGKILLed in the middle of a Galera run, then `fencecheck clean`: no mariadbd
// (nor an SST's rsync) of the run may be left, nor its data directories, whose sockets are in
// them. A run that ends normally removes its data directories itself (the logs stay).
// Root only: Galera runs in network namespaces.
#include <unistd.h>

#include "tests/integration/run_fixture.h"
#include "tests/integration/run_processes.h"

namespace fencecheck::testing {
namespace {

class MariadbCleanTest : public RunTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "Galera runs in network namespaces (root)";
    if (::system("command -v mariadbd >/dev/null || test -x /usr/sbin/mariadbd") != 0) {
      if (std::getenv("CI") != nullptr) FAIL() << "mariadbd is not installed (CI must run scripts/setup.sh)";
      GTEST_SKIP() << "mariadbd is not installed (scripts/setup.sh installs it)";
    }
    RunTest::SetUp();
  }
  std::vector<fs::path> data_dirs() const {
    std::vector<fs::path> out;
    for (const char* node : {"n1", "n2", "n3"}) {
      if (fs::exists(run_dir() / "nodes" / node / "data")) out.push_back(run_dir() / "nodes" / node / "data");
    }
    return out;
  }
};

TEST_F(MariadbCleanTest, ControllerKilledThenCleanLeavesNoServerAndNoDataDirectory) {
  pid_t controller = spawn_run({"--backend", "mariadb", "--backend-opt", "cluster=galera", "--nemesis", "none",
                                "--time-limit", "60"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 40)) << "the run never got going:\n" << controller_log();
  std::map<int, std::string> processes = descendants(controller);
  int servers = 0;
  for (const auto& [pid, start] : processes) servers += comm(pid) == "mariadbd" ? 1 : 0;
  EXPECT_EQ(servers, 3) << "three mariadbd under the controller";
  std::vector<fs::path> dirs = data_dirs();
  ASSERT_EQ(dirs.size(), 3u) << "the nodes' data directories in " << run_dir() / "nodes";
  for (const auto& d : dirs) EXPECT_TRUE(fs::exists(d / "mariadbd.sock")) << d;
  std::optional<std::string> run_id = run_id_of_controller(controller);
  ASSERT_TRUE(run_id.has_value()) << "no state file for the run";

  kill_controller_then_clean(controller, *run_id, FENCECHECK_BIN, processes);
  for (const auto& d : dirs) EXPECT_FALSE(fs::exists(d)) << d << " survived clean";
  for (const char* node : {"n1", "n2", "n3"}) {
    EXPECT_TRUE(fs::exists(run_dir() / "nodes" / node / "mariadb.log")) << "the logs are the run's record";
  }
}

TEST_F(MariadbCleanTest, ARunThatEndsRemovesItsDataDirectoryAndKeepsItsLog) {
  auto r = run("--backend mariadb --nemesis none --time-limit 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(data_dirs().empty()) << "a data directory outlived its run";
  EXPECT_TRUE(fs::exists(run_dir() / "nodes" / "n1" / "mariadb.log"));
}

}  // namespace
}  // namespace fencecheck::testing
