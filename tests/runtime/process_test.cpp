// Processes started through Runtime::spawn (the Supervisor behind it), under the local
// runtime: logs, groups, signals, pauses, crashes, readiness, the spec decorator.
#include "platform/runtime_registry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "platform/os_util.h"
#include "platform/run_state.h"
#include "tests/runtime/test_util.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::read_text;

bool gone(int pid) {
  char s = os::process_state(pid);
  return s == '\0' || s == 'Z';
}

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_->create({"n1", "c1"}); }

  ProcessSpec shell(const std::string& script, const std::string& name = "sh") {
    return {"n1", name, {"sh", "-c", script}, {}, tmp_.path() / "nodes/n1" / (name + ".log"), {}, {}};
  }

  testing::TempDir tmp_;
  RunState state_{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime_ = make_runtime("local", state_.run_id(), state_);
};

TEST_F(ProcessTest, LogsOutputAndRecordsTheGroupUntilStopped) {
  ProcessSpec spec = shell("echo hi from $NODE_NAME in $(pwd); sleep 30");
  spec.env = {{"NODE_NAME", "n1"}};
  spec.cwd = tmp_.path();
  Process& p = runtime_->spawn(spec);
  EXPECT_TRUE(eventually([&] {
    return read_text(spec.log).find("hi from n1 in " + tmp_.path().string()) != std::string::npos;
  })) << read_text(spec.log);
  EXPECT_TRUE(p.alive());
  EXPECT_EQ(::getpgid(p.pid()), p.pid());
  EXPECT_EQ(state_.snapshot()["process_groups"][0]["pgid"], p.pid());

  p.stop(1000ms);
  EXPECT_FALSE(p.alive());
  EXPECT_TRUE(gone(p.pid()));
  ASSERT_TRUE(p.exit_status());
  EXPECT_TRUE(WIFSIGNALED(*p.exit_status()));
  EXPECT_TRUE(state_.snapshot()["process_groups"].empty());
  p.stop(1000ms);  // idempotent
}

TEST_F(ProcessTest, LogIsAppendedNotTruncated) {
  ProcessSpec spec = shell("echo second");
  std::filesystem::create_directories(spec.log.parent_path());
  { std::ofstream(spec.log) << "first\n"; }
  Process& p = runtime_->spawn(spec);
  ASSERT_TRUE(eventually([&] { return !p.alive(); }));
  EXPECT_EQ(read_text(spec.log), "first\nsecond\n");
  EXPECT_EQ(p.exit_status(), 0);
}

TEST_F(ProcessTest, SignalStopsAndContinuesTheProcess) {
  Process& p = runtime_->spawn(shell("sleep 30"));
  ASSERT_TRUE(eventually([&] { return os::process_state(p.pid()) == 'S'; }));
  p.signal(SIGSTOP, test_deadline());
  EXPECT_TRUE(eventually([&] { return os::process_state(p.pid()) == 'T'; }));
  p.signal(SIGCONT, test_deadline());
  EXPECT_TRUE(eventually([&] { return os::process_state(p.pid()) == 'S'; }));
}

TEST_F(ProcessTest, StopKillsTheWholeGroupEvenWhenItIgnoresSigterm) {
  // The grandchild inherits the ignored SIGTERM, so only the group SIGKILL can end it.
  ProcessSpec spec = shell("trap '' TERM; sleep 60 & echo grandchild=$!; wait");
  Process& p = runtime_->spawn(spec);
  int grandchild = 0;
  ASSERT_TRUE(eventually([&] {
    auto log = read_text(spec.log);
    auto at = log.find("grandchild=");
    if (at == std::string::npos || log.find('\n', at) == std::string::npos) return false;
    grandchild = std::stoi(log.substr(at + 11));
    return true;
  }));
  ASSERT_EQ(::getpgid(grandchild), p.pid());
  p.signal(SIGSTOP, test_deadline());  // a paused group must be stoppable too
  p.stop(200ms);
  EXPECT_TRUE(gone(p.pid()));
  EXPECT_TRUE(gone(grandchild));
}

TEST_F(ProcessTest, MissingBinaryIsAnErrorNamingIt) {
  ProcessSpec spec = shell("");
  spec.argv = {"fc-no-such-binary-xyz", "--flag"};
  try {
    runtime_->spawn(spec);
    FAIL() << "spawn of a missing binary did not throw";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("fc-no-such-binary-xyz"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(state_.snapshot()["process_groups"].empty());
}

TEST_F(ProcessTest, ExecFailureComesBackNamingTheBinary) {
  auto bogus = tmp_.path() / "not-a-program";
  { std::ofstream(bogus) << "\x7f" "ELF garbage"; }
  std::filesystem::permissions(bogus, std::filesystem::perms::owner_all);
  ProcessSpec spec = shell("");
  spec.argv = {bogus.string()};
  try {
    runtime_->spawn(spec);
    FAIL() << "exec of a broken binary did not throw";
  } catch (const HarnessError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(bogus.string()), std::string::npos) << what;
    EXPECT_NE(what.find("exec"), std::string::npos) << what;
  }
  EXPECT_TRUE(state_.snapshot()["process_groups"].empty());
}

TEST_F(ProcessTest, UnknownNodeIsAnError) {
  ProcessSpec spec = shell("true");
  spec.node = "n7";
  EXPECT_THROW(runtime_->spawn(spec), HarnessError);
}

TEST_F(ProcessTest, WaitReadyQuotesTheLogWhenTheProcessDies) {
  Process& p = runtime_->spawn(shell("echo 'FATAL: bad config line 3'; exit 3", "server"));
  try {
    runtime_->wait_ready(p, [] { return false; }, 5000ms);
    FAIL() << "wait_ready did not throw";
  } catch (const HarnessError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("FATAL: bad config line 3"), std::string::npos) << what;
    EXPECT_NE(what.find("exited with code 3"), std::string::npos) << what;
  }
}

TEST_F(ProcessTest, WaitReadyTimesOut) {
  Process& p = runtime_->spawn(shell("echo starting; sleep 30", "slow"));
  auto start = std::chrono::steady_clock::now();
  try {
    runtime_->wait_ready(p, [] { return false; }, 300ms);
    FAIL() << "wait_ready did not time out";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("not ready after 300 ms"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("starting"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(ProcessTest, WaitReadyReturnsOnceReady) {
  Process& p = runtime_->spawn(shell("sleep 30"));
  int polls = 0;
  runtime_->wait_ready(p, [&] { return ++polls == 3; }, 5000ms);
  EXPECT_EQ(polls, 3);
}

TEST_F(ProcessTest, TcpConnectsSeesAListener) {
  auto listener = testing::loopback_listener();
  EXPECT_TRUE(runtime_->tcp_connects("c1", "127.0.0.1", listener.port, 500ms));
  listener.socket.reset();
  EXPECT_FALSE(runtime_->tcp_connects("c1", "127.0.0.1", listener.port, 500ms));
  EXPECT_THROW(runtime_->tcp_connects("c1", "localhost", listener.port, 500ms), HarnessError);
}

TEST_F(ProcessTest, DestroyStopsEverything) {
  int pid = 0;
  {
    auto inner = make_runtime("local", state_.run_id(), state_);
    inner->create({"n1"});
    pid = inner->spawn(shell("sleep 30")).pid();
    ASSERT_FALSE(gone(pid));
  }
  EXPECT_TRUE(gone(pid));
  pid = runtime_->spawn(shell("sleep 30")).pid();
  runtime_->destroy();
  EXPECT_TRUE(gone(pid));
}

TEST_F(ProcessTest, PauseWaitsUntilStoppedAndIsKnownDeliberate) {
  // Two threads: pause() must wait for every thread of the group, not just the leader.
  Process& p = runtime_->spawn(shell("sleep 30 & sleep 30; wait"));
  // Wait until both sleeps run: a shell that has vforked a child which is not yet exec'd
  // sits in 'D' and cannot stop until the child execs, which a stopped child never does.
  ASSERT_TRUE(eventually([&] {
    std::vector<int> members = os::group_members(p.pid());
    if (members.size() != 3) return false;
    for (int pid : members) {
      if (os::process_state(pid) != 'S') return false;
    }
    return true;
  }));
  EXPECT_FALSE(p.paused());
  p.pause(test_deadline());
  EXPECT_TRUE(p.paused());
  for (int pid : os::group_members(p.pid())) EXPECT_EQ(os::process_state(pid), 'T') << pid;
  p.resume(test_deadline());
  EXPECT_FALSE(p.paused());
  EXPECT_TRUE(eventually([&] { return os::process_state(p.pid()) == 'S'; }));
}

TEST_F(ProcessTest, CrashIsAnExpectedExitAndOtherExitsAreNot) {
  Process& crashed = runtime_->spawn(shell("sleep 30"));
  Process& died = runtime_->spawn(shell("exit 4", "dies"));
  EXPECT_FALSE(crashed.exit_expected());
  crashed.crash(test_deadline());
  EXPECT_TRUE(crashed.exit_expected());
  EXPECT_FALSE(crashed.alive());
  EXPECT_EQ(crashed.describe_exit(), "was killed by signal 9");
  ASSERT_TRUE(eventually([&] { return !died.alive(); }));
  EXPECT_FALSE(died.exit_expected());
  EXPECT_EQ(died.describe_exit(), "exited with code 4");
  Process& stopped = runtime_->spawn(shell("sleep 30"));
  stopped.stop(1000ms);
  EXPECT_TRUE(stopped.exit_expected());
  EXPECT_EQ(runtime_->processes().size(), 3u);
}

TEST_F(ProcessTest, TheDecoratorSeesEverySpecAndPreloadsGoFirst) {
  runtime_->set_spec_decorator([](ProcessSpec& spec) {
    spec.env["DECORATED"] = spec.node;
    spec.preload.push_back("/nonexistent/libfirst.so");
  });
  ProcessSpec spec = shell("echo \"$DECORATED|$LD_PRELOAD\"");
  spec.env["LD_PRELOAD"] = "/nonexistent/libtheirs.so";
  Process& p = runtime_->spawn(spec);
  ASSERT_TRUE(eventually([&] { return !p.alive(); }));
  // The dynamic loader complains about the missing libraries on stderr; the echo comes last.
  EXPECT_NE(read_text(spec.log).find("n1|/nonexistent/libfirst.so:/nonexistent/libtheirs.so\n"),
            std::string::npos)
      << read_text(spec.log);
}

// If the controller is SIGKILLed, its children die with it (PR_SET_PDEATHSIG).
TEST(ProcessDeathTest, ChildrenDieWithTheController) {
  testing::TempDir tmp;
  std::string id = RunState::new_run_id();
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t controller = testing::fork_child([&] {
    auto* state = new RunState(id);
    auto runtime = make_runtime("local", id, *state).release();
    runtime->create({"n1"});
    int pid = runtime->spawn({"n1", "sleep", {"sleep", "60"}, {}, tmp.path() / "sleep.log", {}, {}}).pid();
    [[maybe_unused]] auto n = ::write(report[1], &pid, sizeof pid);
    ::pause();
  });
  ::close(report[1]);
  int sleeper = 0;
  ASSERT_EQ(::read(report[0], &sleeper, sizeof sleeper), static_cast<ssize_t>(sizeof sleeper));
  ::close(report[0]);
  ASSERT_FALSE(gone(sleeper));
  ::kill(controller, SIGKILL);
  ::waitpid(controller, nullptr, 0);
  EXPECT_TRUE(eventually([&] { return gone(sleeper); }, 2000ms));
  EXPECT_TRUE(clean_runs(id, false).errors.empty());  // the dead controller's state file
  EXPECT_FALSE(std::filesystem::exists(RunState::state_dir() / (id + ".json")));
}

}  // namespace
}  // namespace fencecheck
