// `fencecheck run --runtime external` against a redis-server this test starts itself, as a
// user's own server would be (label `integration`, root): Kleppmann's K1 (a holder paused
// past its lease, an unfenced resource) is found through the relay; a server fault is
// refused with exit 3 before anything starts; a server that does not answer stops the run
// at setup; a server that dies during the run makes the verdict unknown, never valid.
#include <signal.h>

#include <gtest/gtest.h>

#include "platform/tcp.h"
#include "tests/integration/run_fixture.h"

namespace fencecheck::testing {
namespace {

class ExternalRun : public RunTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the external runtime needs root (run ctest with sudo)";
    RunTest::SetUp();
    if (IsSkipped()) return;
    port_ = free_loopback_port();
    redis_ = ::fork();
    if (redis_ == 0) {
      ::setpgid(0, 0);
      const std::string port = std::to_string(port_);
      ::execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--logfile", "", nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 100 && !tcp_connect_within("127.0.0.1", port_, std::chrono::milliseconds(100)); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(tcp_connect_within("127.0.0.1", port_, std::chrono::milliseconds(500))) << "redis-server did not start";
  }
  void TearDown() override {
    stop_redis();
    RunTest::TearDown();
  }
  void stop_redis() {
    if (redis_ <= 0) return;
    ::kill(redis_, SIGKILL);
    exit_code(redis_);
    redis_ = 0;
  }
  // `fencecheck run` on the external runtime with ARGS, watched for its run id (run_tracked):
  // the namespaces a test looks for are its own run's, whatever runs beside it.
  TrackedRun run_external(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--runtime", "external", "--endpoints", "redis=127.0.0.1:" + std::to_string(port_),
                               "--backend", "redis"});
    return run_tracked(args);
  }

  std::uint16_t port_ = 0;
  pid_t redis_ = 0;
};

TEST_F(ExternalRun, PauseHolderReproducesK1ThroughTheRelay) {
  auto r = run_external({"--nemesis", "pause-holder", "--ttl-ms", "500", "--pause-ms", "1500", "--nemesis-interval",
                         "1000", "--hold-ms", "200", "--time-limit", "15", "--resource", "unfenced", "--seed", "7"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("unavailable under --runtime external: "), std::string::npos) << r.out;
  json res = results();
  EXPECT_EQ(res["checkers"]["exclusion"]["valid"], false) << res.dump(2);
  EXPECT_EQ(res["checkers"]["resource"]["valid"], false) << res.dump(2);
  json config = json::parse(std::ifstream(latest() / "config.json"));
  EXPECT_EQ(config["runtime"], "external");
  EXPECT_TRUE(config["unavailable_faults"].contains("kill-server")) << config.dump(2);
  EXPECT_FALSE(config["unavailable_faults"].contains("pause-holder")) << config.dump(2);
  EXPECT_FALSE(r.run_id.empty()) << "no state file seen for the run";
  EXPECT_EQ(namespaces_of_run(r.run_id), 0u) << "the run left namespaces";
  // The server the run did not start is still there: the run never touched it.
  EXPECT_TRUE(tcp_connect_within("127.0.0.1", port_, std::chrono::milliseconds(500)));
}

TEST_F(ExternalRun, AServerFaultIsRefusedBeforeAnythingStarts) {
  auto r = run_external({"--nemesis", "kill-server"});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("fault \"kill-server\" needs a runtime that runs the backend's servers, which --runtime "
                       "external cannot"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("available here: pause-holder"), std::string::npos) << r.out;
  EXPECT_TRUE(run_dir().empty()) << "a refused run made " << run_dir();
  EXPECT_EQ(namespaces_of_run(r.run_id), 0u);
}

TEST_F(ExternalRun, AServerThatDoesNotAnswerStopsTheRunAtSetup) {
  stop_redis();
  auto r = run_external({"--time-limit", "5"});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("does not answer TCP from this machine"), std::string::npos) << r.out;
  EXPECT_EQ(namespaces_of_run(r.run_id), 0u);
}

// The run's default nemesis is pause-holder, which stays armed while no acquire succeeds:
// an armed fault has done nothing, so the stall still counts (CI once saw this run end
// `valid`, with 2431 of 2500 ops unknown, when armed counted as a fault in force).
TEST_F(ExternalRun, AServerThatDiesDuringTheRunMakesTheVerdictUnknown) {
  pid_t pid = spawn_run({"--runtime", "external", "--endpoints", "redis=127.0.0.1:" + std::to_string(port_),
                         "--backend", "redis", "--time-limit", "12", "--stall-ms", "3000"});
  ASSERT_TRUE(wait_for_history("\"type\":\"ok\"")) << controller_log();
  const std::string run_id = run_id_of_controller(pid).value_or("");
  ASSERT_FALSE(run_id.empty()) << "no state file for the run";
  stop_redis();  // nobody asked for this: the bench broke
  const int code = exit_code(pid);
  EXPECT_NE(code, 0) << controller_log();
  json res = results();
  EXPECT_EQ(res["valid"], "unknown") << res.dump(2);
  EXPECT_EQ(namespaces_of_run(run_id), 0u);
}

}  // namespace
}  // namespace fencecheck::testing
