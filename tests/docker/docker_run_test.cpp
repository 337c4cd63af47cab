// `--runtime docker` end to end (label `integration`), against the private dockerd ctest
// starts with the fencecheck image (tests/docker/dockerd.sh): Kleppmann's K1 with the
// verdicts it has on netns (the netns scenario tests judge the other rows), a freeze, each
// backend family's servers in containers (Redis, PostgreSQL, a ZooKeeper ensemble), and
// after every way a run can end (normal end, Ctrl-C, SIGKILL of the controller + `fencecheck
// clean`) no container, network, process or host firewall change of the run left behind.
// Also the image's own one-line CI use.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "tests/docker/docker_support.h"
#include "tests/integration/run_fixture.h"

namespace fencecheck::testing {
namespace {

class DockerRun : public RunTest {
 protected:
  void SetUp() override {
    FC_REQUIRE_DOCKER();
    RunTest::SetUp();
    ASSERT_EQ(labelled_docker_objects(), "") << "an earlier test left these";
    host_before_ = host_network_snapshot();
  }
  // Nothing of any run is left: containers, networks, the host's firewall and links.
  void expect_nothing_left() {
    EXPECT_EQ(labelled_docker_objects(), "");
    EXPECT_EQ(host_network_snapshot(), host_before_) << "the host's firewall or links changed";
  }
  // The state file of the run controller `pid` runs, once it records processes (≤ 60 s:
  // a ZooKeeper ensemble's containers and JVMs come first).
  static json state_of(pid_t pid) {
    for (int i = 0; i < 600; ++i) {
      std::error_code ec;
      for (const auto& f : fs::directory_iterator("/run/fencecheck", ec)) {
        if (f.path().extension() != ".json") continue;
        json s = json::parse(std::ifstream(f.path()), nullptr, false);
        if (!s.is_discarded() && s["controller"]["pid"] == pid && !s["process_groups"].empty()) return s;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return nullptr;
  }
  std::string host_before_;
};

TEST_F(DockerRun, KleppmannK1HasItsNetnsVerdicts) {
  auto r = run_command("timeout 600 " + std::string(FENCECHECK_BIN) +
                       " suite kleppmann --runtime docker --only K1 --store " + store_);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("| K1 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 of 1 run(s) as predicted"), std::string::npos) << r.out;
  expect_nothing_left();
}

TEST_F(DockerRun, NormalEndWithPartitionsLeavesNothing) {
  pid_t pid = spawn_run({"--runtime", "docker", "--backend", "redis", "--nemesis", "partition-halves",
                         "--nemesis-interval", "1000", "--time-limit", "4", "--resource", "fenced"});
  ASSERT_TRUE(wait_for_history("\"ok\"")) << controller_log();
  json state = state_of(pid);  // every process of the run is up by the first ok op
  ASSERT_FALSE(state.is_null()) << controller_log();
  const int code = exit_code(pid);
  EXPECT_TRUE(code == 0 || code == 1) << controller_log();
  EXPECT_GE(history_lines_containing("\"partition\""), 1u) << "no partition was made";
  EXPECT_EQ(json::parse(std::ifstream(latest() / "config.json"))["runtime"], "docker");
  expect_groups_gone(state);
  expect_nothing_left();
}

TEST_F(DockerRun, FreezeClientPausesTheWholeContainer) {
  auto r = run("--runtime docker --backend redis --nemesis freeze-client --pause-ms 1500 "
               "--nemesis-interval 1000 --time-limit 4 --resource fenced");
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out;
  EXPECT_GE(history_lines_containing("\"fault\":\"freeze-client\""), 2u) << "no freeze and thaw recorded";
  EXPECT_EQ(history_lines_containing("not_applied"), 0u);
  expect_nothing_left();
}

// PostgreSQL in its container: it starts, serves the clients, and goes with the run.
TEST_F(DockerRun, InterruptedPostgresRunLeavesNothing) {
  pid_t pid = spawn_run({"--runtime", "docker", "--backend", "postgres", "--time-limit", "60", "--nemesis", "none"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 1, std::chrono::seconds(60))) << controller_log();
  json state = state_of(pid);
  ASSERT_FALSE(state.is_null()) << controller_log();
  ::kill(pid, SIGINT);
  EXPECT_EQ(exit_code(pid), 2) << controller_log();
  expect_groups_gone(state);
  expect_nothing_left();
}

// A ZooKeeper ensemble in three containers: it elects a leader and serves the clients; a
// SIGKILLed controller's containers (and JVMs) all go with `fencecheck clean`.
TEST_F(DockerRun, KilledZooKeeperRunThenCleanLeavesNothing) {
  pid_t pid = spawn_run({"--runtime", "docker", "--backend", "zookeeper", "--time-limit", "60", "--nemesis", "none"});
  json state = state_of(pid);
  ASSERT_FALSE(state.is_null()) << controller_log();
  ASSERT_TRUE(wait_for_history("\"ok\"", 1, std::chrono::seconds(60))) << controller_log();
  state = state_of(pid);  // with the JVMs' process groups
  EXPECT_NE(labelled_docker_objects(), "");
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  auto clean = run_command(std::string(FENCECHECK_BIN) + " clean --run " + state["run_id"].get<std::string>());
  EXPECT_EQ(clean.code, 0) << clean.out;
  EXPECT_NE(clean.out.find("removed container"), std::string::npos) << clean.out;
  expect_groups_gone(state);
  expect_nothing_left();
}

TEST_F(DockerRun, AMissingImageIsAHarnessErrorNamingTheFix) {
  auto r = run("--runtime docker --backend redis --nemesis none --time-limit 1 --docker-image fencecheck-no-such-image");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("docker/build.sh"), std::string::npos) << r.out;
  expect_nothing_left();
}

// --privileged, or where this host's own capability bounding set lacks some capability (a
// sandbox without CAP_SYS_RESOURCE, say: runc then fails "unable to apply caps"), every
// capability it has and no seccomp or AppArmor confinement, which is what the netns runtime
// inside needs.
std::string privileged_flags() {
  std::ifstream status("/proc/self/status");
  unsigned long long bounding = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapBnd:", 0) == 0) bounding = std::stoull(line.substr(7), nullptr, 16);
  }
  int last = 40;
  std::ifstream("/proc/sys/kernel/cap_last_cap") >> last;
  const unsigned long long all = (1ULL << (last + 1)) - 1, sys_resource = 1ULL << 24;
  if ((bounding & all) == all) return "--privileged";
  if ((bounding | sys_resource) == all) {
    return "--cap-add ALL --cap-drop SYS_RESOURCE --security-opt seccomp=unconfined "
           "--security-opt apparmor=unconfined";
  }
  return "";
}

TEST_F(DockerRun, TheImageRunsTheSuiteWithNetnsInside) {
  const std::string flags = privileged_flags();
  if (flags.empty()) GTEST_SKIP() << "this host's capability bounding set lacks more than CAP_SYS_RESOURCE";
  // The README's one-line CI use (--network none: the test dockerd has no bridge).
  auto r = run_command("timeout 600 docker run " + flags + " --rm --network none -v " + store_ +
                       ":/results fencecheck suite kleppmann --only K1 --store /results");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 of 1 run(s) as predicted"), std::string::npos) << r.out;
}

// docker/compose.yml runs the same suite (privileged as above: a compose override file
// carries the capability flags where --privileged cannot work here).
TEST_F(DockerRun, ComposeRunsTheSuiteTheSameWay) {
  const std::string flags = privileged_flags();
  if (flags.empty()) GTEST_SKIP() << "this host's capability bounding set lacks more than CAP_SYS_RESOURCE";
  std::string files = "-f " + std::string(FENCECHECK_SOURCE_DIR) + "/docker/compose.yml";
  if (flags != "--privileged") {
    const std::string override_file = store_ + "/compose.override.yml";
    std::ofstream(override_file) << "version: \"3.7\"\nservices:\n  suite:\n    privileged: false\n"
                                    "    cap_add: [ALL]\n    cap_drop: [SYS_RESOURCE]\n"
                                    "    security_opt: [seccomp=unconfined, apparmor=unconfined]\n";
    files += " -f " + override_file;
  }
  auto r = run_command("FENCECHECK_RESULTS=" + store_ + " timeout 600 docker-compose " + files +
                       " run --rm suite suite kleppmann --only K1 --store /results");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 of 1 run(s) as predicted"), std::string::npos) << r.out;
}

// Without a daemon: one line saying how to get one, exit 3. Needs no dockerd at all.
TEST(DockerRuntimeUnavailable, NoDaemonIsOneLineAndExit3) {
  auto r = run_command("DOCKER_HOST=unix:///nonexistent/docker.sock " + std::string(FENCECHECK_BIN) +
                       " run --runtime docker --backend redis --nemesis none --time-limit 1 --store /tmp/fc-no-daemon");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("needs a docker daemon"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dockerd"), std::string::npos) << r.out;
  fs::remove_all("/tmp/fc-no-daemon");
}

}  // namespace
}  // namespace fencecheck::testing
