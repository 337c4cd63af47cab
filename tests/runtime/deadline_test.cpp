// Deadline (platform/deadline.h), and the two ground-floor calls that honour one: a command
// (os::run_command) and an ssh command (SshHostConnection::exec, through a stand-in `ssh` on
// PATH that fails, hangs or answers as the test says). The retry rules are the contract:
// only an idempotent command is run again, only after a transport failure, only while the
// deadline lasts; a command that timed out is never run again.
#include "platform/deadline.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "platform/errors.h"
#include "platform/os_util.h"
#include "platform/ssh_remote.h"
#include "tests/runtime/test_util.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

milliseconds since(Clock::time_point t) { return std::chrono::duration_cast<milliseconds>(Clock::now() - t); }

TEST(Deadline, WithinIsNeverLaterAndCancelEndsIt) {
  const Deadline d = Deadline::after(milliseconds(500));
  const Deadline sooner = d.within(milliseconds(100));
  EXPECT_LE(sooner.at(), Clock::now() + milliseconds(100));
  EXPECT_EQ(d.within(milliseconds(10'000)).at(), d.at()) << "within() never extends a deadline";
  EXPECT_FALSE(d.expired());
  std::atomic<bool> stop{false};
  const Deadline c = d.or_when([&] { return stop.load(); });
  EXPECT_FALSE(c.expired());
  stop = true;
  EXPECT_TRUE(c.cancelled());
  EXPECT_EQ(c.left(), milliseconds(0));
  EXPECT_FALSE(d.cancelled()) << "or_when() changes only the copy";
}

TEST(Deadline, SleepStopsAtTheDeadlineOrTheCancel) {
  auto t = Clock::now();
  EXPECT_FALSE(Deadline::after(milliseconds(50)).sleep(milliseconds(5000)));
  EXPECT_LT(since(t), milliseconds(1000));
  EXPECT_TRUE(Deadline::after(milliseconds(5000)).sleep(milliseconds(20)));
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    stop = true;
  });
  t = Clock::now();
  EXPECT_FALSE(Deadline::only_cancel([&] { return stop.load(); }).sleep(milliseconds(10'000)));
  EXPECT_LT(since(t), milliseconds(2000));
  stopper.join();
}

TEST(Deadline, ACommandIsKilledAtItsDeadlineAndOnItsCancel) {
  auto t = Clock::now();
  os::CommandResult r = os::run_command({"sleep", "30"}, "", Deadline::after(milliseconds(200)));
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  EXPECT_LT(since(t), milliseconds(2000));
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    stop = true;
  });
  t = Clock::now();
  r = os::run_command({"sleep", "30"}, "", Deadline::only_cancel([&] { return stop.load(); }));
  stopper.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_LT(since(t), milliseconds(2000));
}

// A stand-in for OpenSSH on PATH: counts its runs and does what $FAKE_SSH says (exit 255 as
// ssh does when it cannot reach the host, hang as a silent host does, or answer).
class FakeSsh : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::filesystem::path bin = dir_.path() / "bin";
    std::filesystem::create_directories(bin);
    std::ofstream(bin / "ssh") << "#!/bin/sh\n"
                                  "echo run >> " << (dir_.path() / "runs").string() << "\n"
                                  "case \"$FAKE_SSH\" in\n"
                                  "  transport) echo 'ssh: connect to host h1: Connection refused' >&2; exit 255 ;;\n"
                                  "  hang) exec sleep 30 ;;\n"
                                  "  *) cat >/dev/null; echo answered; exit 0 ;;\n"
                                  "esac\n";
    std::filesystem::permissions(bin / "ssh", std::filesystem::perms::owner_all);
    old_path_ = ::getenv("PATH");
    ::setenv("PATH", (bin.string() + ":" + old_path_).c_str(), 1);
  }
  void TearDown() override {
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("FAKE_SSH");
  }
  int runs() const {
    std::ifstream in(dir_.path() / "runs");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  SshHostConnection connection() const {
    SshHost h;
    h.name = "h1";
    h.host = "192.0.2.1";
    return SshHostConnection(h, dir_.path() / "control");
  }

  TempDir dir_;
  std::string old_path_;
};

TEST_F(FakeSsh, AnIdempotentCommandIsRetriedAfterATransportFailureWithinItsDeadline) {
  ::setenv("FAKE_SSH", "transport", 1);
  SshHostConnection c = connection();
  const auto t = Clock::now();
  EXPECT_THROW(c.exec("true", "", Deadline::after(milliseconds(700)), Retry::kIdempotent), HarnessError);
  EXPECT_GE(runs(), 3) << "retried 100, 200, 400 ms apart";
  EXPECT_LT(since(t), milliseconds(1500)) << "retried past its deadline";
}

TEST_F(FakeSsh, ACommandThatIsNotIdempotentRunsAtMostOnce) {
  ::setenv("FAKE_SSH", "transport", 1);
  SshHostConnection c = connection();
  try {
    c.exec("iptables -I INPUT 1 -j fc-abc123", "", Deadline::after(milliseconds(5000)), Retry::kNever);
    ADD_FAILURE() << "a transport failure must throw";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("Connection refused"), std::string::npos) << e.what();
  }
  EXPECT_EQ(runs(), 1);
}

TEST_F(FakeSsh, ASilentHostCostsTheDeadlineOnceAndIsNeverAskedAgain) {
  ::setenv("FAKE_SSH", "hang", 1);
  SshHostConnection c = connection();
  const auto t = Clock::now();
  try {
    c.exec("kill -s CONT -- -42", "", Deadline::after(milliseconds(500)), Retry::kIdempotent);
    ADD_FAILURE() << "no answer must throw";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("no answer within 500 ms"), std::string::npos) << e.what();
  }
  EXPECT_LT(since(t), milliseconds(1500)) << "the old exec waited 5 x 10 s";
  EXPECT_EQ(runs(), 1) << "a command that timed out may still run there: never run it again";
}

TEST_F(FakeSsh, TheCancelCheckEndsAWaitAtOnce) {
  ::setenv("FAKE_SSH", "hang", 1);
  SshHostConnection c = connection();
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    stop = true;
  });
  const auto t = Clock::now();
  EXPECT_THROW(c.exec("true", "", Deadline::after(milliseconds(30'000), [&] { return stop.load(); }),
                      Retry::kIdempotent),
               HarnessError);
  stopper.join();
  EXPECT_LT(since(t), milliseconds(2000));
}

TEST_F(FakeSsh, AnAnsweringHostIsAskedOnce) {
  SshHostConnection c = connection();
  SshResult r = c.exec("true", "input", Deadline::after(milliseconds(5000)), Retry::kIdempotent);
  EXPECT_EQ(r.exit, 0);
  EXPECT_EQ(r.out, "answered\n");
  EXPECT_EQ(runs(), 1);
}

}  // namespace
}  // namespace fencecheck::testing
