// The ssh runtime's own promises over real OpenSSH, on the fixture's hosts (label
// `integration`): a partition cuts TCP between hosts and its heal restores it, a pause stops
// a remote process group and a resume continues it, shared files reach a host with their
// paths rewritten, a clock file changed on the controller is written into the host's copy
// in place, and destroy() leaves no process, chain or directory on any host.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/runtime/test_util.h"
#include "tests/ssh/ssh_support.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

class SshRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FC_REQUIRE_SSH_FIXTURE();
    ASSERT_EQ(what_runs_left_on_hosts(), "") << "an earlier test left this";
    state_ = std::make_unique<RunState>(RunState::new_run_id());
    runtime_ = make_ssh_runtime(state_->run_id(), *state_, fixture_nodes_file());
  }
  void TearDown() override {
    if (!runtime_) return;
    runtime_->destroy();
    // This run's alone: its controller, this test, still runs.
    EXPECT_EQ(what_runs_left_on_hosts(state_->run_id()), "") << "destroy() left this on the hosts";
  }
  std::unique_ptr<RunState> state_;
  std::unique_ptr<Runtime> runtime_;
  TempDir tmp_;
};

TEST_F(SshRuntimeTest, PartitionCutsTcpAndHealRestoresIt) {
  runtime_->create({"n1", "c1"});
  const std::string server = runtime_->node("n1").address;
  ASSERT_NE(server, runtime_->node("c1").address);
  Process& listener =
      runtime_->spawn({"n1", "nc", {"nc", "-lk", server, "7777"}, {}, tmp_.path() / "nc.log", {}, {}});
  runtime_->wait_ready(listener, [&] { return runtime_->tcp_connects("n1", server, 7777, 500ms); }, 10s);
  EXPECT_TRUE(runtime_->tcp_connects("c1", server, 7777, 1000ms)) << "c1 cannot reach n1 before any cut";

  runtime_->cut(complete_grudge({{"n1"}, {"c1"}}), test_deadline());
  EXPECT_FALSE(runtime_->tcp_connects("c1", server, 7777, 1000ms)) << "the partition did not cut TCP";
  EXPECT_TRUE(runtime_->tcp_connects("n1", server, 7777, 1000ms)) << "n1 lost its own port";

  runtime_->heal(test_deadline());
  EXPECT_TRUE(runtime_->tcp_connects("c1", server, 7777, 1000ms)) << "the heal did not restore TCP";
  EXPECT_TRUE(listener.alive());
}

TEST_F(SshRuntimeTest, PauseStopsTheRemoteGroupAndResumeContinuesIt) {
  runtime_->create({"c1"});
  // Prints a line every 100 ms: a stopped group prints nothing.
  Process& p = runtime_->spawn(
      {"c1", "ticker", {"sh", "-c", "while :; do echo tick; sleep 0.1; done"}, {}, tmp_.path() / "tick.log", {}, {}});
  auto ticks = [&] {
    std::ifstream in(tmp_.path() / "tick.log");
    return std::count(std::istreambuf_iterator<char>(in), {}, '\n');
  };
  std::this_thread::sleep_for(500ms);
  ASSERT_GT(ticks(), 0) << p.log_tail();
  ASSERT_TRUE(p.pause(test_deadline(5000ms)));
  EXPECT_TRUE(p.paused());
  std::this_thread::sleep_for(300ms);  // output already in flight lands
  const auto frozen = ticks();
  std::this_thread::sleep_for(700ms);
  EXPECT_EQ(ticks(), frozen) << "the remote process went on while paused";
  p.resume(test_deadline());
  std::this_thread::sleep_for(700ms);
  EXPECT_GT(ticks(), frozen) << "the remote process did not resume";
  p.crash(test_deadline());
  EXPECT_FALSE(p.alive());
  EXPECT_TRUE(p.exit_expected());
}

TEST_F(SshRuntimeTest, SharedFilesReachTheHostWithTheirPathsRewritten) {
  const std::filesystem::path dir = tmp_.path() / "run";
  std::filesystem::create_directories(dir / "nodes" / "n1");
  const std::filesystem::path conf = dir / "nodes" / "n1" / "app.conf";
  std::ofstream(conf) << "dir " << (dir / "nodes" / "n1").string() << "\n";
  runtime_->share(dir, true);
  runtime_->create({"n1"});
  Process& p = runtime_->spawn({"n1", "cat", {"sh", "-c", "pwd; cat \"$0\"", conf.string()}, {},
                                dir / "nodes" / "n1" / "cat.log", dir / "nodes" / "n1", {}});
  for (int i = 0; i < 100 && p.alive(); ++i) std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(p.alive());
  const std::string log = read_text(dir / "nodes" / "n1" / "cat.log");
  const std::string remote = "/var/tmp/fencecheck/" + state_->run_id() + "/n1/s0/run/nodes/n1";
  EXPECT_NE(log.find(remote + "\n"), std::string::npos) << "cwd not rewritten:\n" << log;
  EXPECT_NE(log.find("dir " + remote + "\n"), std::string::npos) << "the file's content not rewritten:\n" << log;
  EXPECT_EQ(log.find(dir.string()), std::string::npos) << "a controller path reached the host:\n" << log;
}

}  // namespace
}  // namespace fencecheck::testing

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

// The last number a log of seconds since the epoch shows (0 when none yet).
long long last_seconds(const std::filesystem::path& log) {
  std::ifstream in(log);
  long long last = 0;
  for (std::string line; std::getline(in, line);) {
    try {
      last = std::stoll(line);
    } catch (const std::exception&) {
    }
  }
  return last;
}

// A clock shift over ssh: the offset file's copy on the host is written in place, so a
// remote process that mapped it (through the preloaded clock library) sees its wall clock
// jump, and group_maps says it mapped it.
TEST_F(SshRuntimeTest, AClockFileChangedHereIsWrittenIntoTheHostsCopyInPlace) {
  const std::filesystem::path dir = tmp_.path() / "clock";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "c1.clock";
  { std::ofstream(file, std::ios::binary) << std::string(4096, '\0'); }
  runtime_->share(tmp_.path(), true);
  runtime_->share(FC_CLOCK_LIB, false);
  runtime_->create({"c1"});
  // One long-lived process that reads the wall clock through libc (a `date` per line would
  // map the file only for an instant).
  ProcessSpec spec{"c1",
                   "clock",
                   {"python3", "-u", "-c", "import time\nwhile True:\n print(int(time.time()))\n time.sleep(0.1)"},
                   {},
                   tmp_.path() / "date.log",
                   {},
                   {}};
  spec.preload = {FC_CLOCK_LIB};
  spec.env["FENCECHECK_CLOCK_FILE"] = file.string();
  Process& p = runtime_->spawn(spec);
  std::this_thread::sleep_for(800ms);
  const long long before = last_seconds(tmp_.path() / "date.log");
  ASSERT_GT(before, 0) << p.log_tail();
  EXPECT_TRUE(runtime_->group_maps(p, file, test_deadline())) << "the remote process never mapped its clock file";
  EXPECT_FALSE(runtime_->group_maps(p, dir / "c2.clock", test_deadline()));

  const std::int64_t offset_ns = 100000LL * 1000000000LL;  // +100000 s
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.write(reinterpret_cast<const char*>(&offset_ns), sizeof offset_ns);
  }
  runtime_->file_changed(file, sizeof offset_ns, test_deadline());
  std::this_thread::sleep_for(800ms);
  EXPECT_NEAR(last_seconds(tmp_.path() / "date.log") - before, 100000, 5) << "the shift did not reach the host";
  p.crash(test_deadline());
}

}  // namespace
}  // namespace fencecheck::testing
