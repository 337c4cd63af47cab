// What the suite runner keeps of a run's log for suite.json; how it forks a run.
#include "harness/suite/suite_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "platform/proc_stat.h"
#include "platform/stop_signals.h"

namespace fencecheck {
namespace {

struct LogFile {
  explicit LogFile(const std::string& text)
      : path(std::filesystem::temp_directory_path() / ("fc-suite-log-" + std::to_string(::getpid()))) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~LogFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
};

// A tail cut through a character, or a server's stray byte, must still go into suite.json.
TEST(RunLogTail, IsValidUtf8WhereverItIsCut) {
  // "é" is two bytes: a 5-byte tail of "ééé" would start inside one.
  LogFile cut("ab\xc3\xa9\xc3\xa9\xc3\xa9");
  std::string tail = run_log_tail(cut.path, 5);
  EXPECT_EQ(tail, "…\xc3\xa9\xc3\xa9");
  EXPECT_NO_THROW(nlohmann::json(tail).dump());

  LogFile stray("FATAL: r\xf4le");
  tail = run_log_tail(stray.path);
  EXPECT_EQ(tail, "FATAL: r\xEF\xBF\xBDle");
  EXPECT_NO_THROW(nlohmann::json(tail).dump());
}

TEST(RunLogTail, AMissingLogIsEmpty) { EXPECT_EQ(run_log_tail("/nonexistent/fc.log"), ""); }

// The "Sig..." line of a /proc status file, e.g. "SigCgt:\t0000000000004002"; empty if absent.
std::string status_line(const std::filesystem::path& status, const std::string& key) {
  std::ifstream in(status);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) == 0) return line;
  }
  return "";
}

bool has_signal(const std::string& line, int sig) {
  const auto tab = line.find('\t');
  return tab != std::string::npos && ((std::stoull(line.substr(tab + 1), nullptr, 16) >> (sig - 1)) & 1) != 0;
}

std::atomic<int> g_test_stops{0};
void count_stop(int) { ++g_test_stops; }

// A run child caught between fork and exec: its log is a FIFO, so it waits in open(2) until
// the test opens the other end. What the child was like there, and what it then did.
struct CaughtChild {
  std::string caught, blocked;  // its SigCgt and SigBlk lines while it waited
  std::string output;           // what the program it exec'd wrote
  int exit_code = -2;
};

CaughtChild fork_a_run_and_catch_it(bool interrupt_it) {
  char pattern[] = "/tmp/fc-suite-fork-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(pattern);
  const auto program = dir / "fake-fencecheck", log = dir / "run.log";
  std::ofstream(program) << "#!/bin/sh\ngrep '^Sig' /proc/self/status\n";
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  EXPECT_EQ(::mkfifo(log.c_str(), 0600), 0);
  CaughtChild seen;
  std::thread watcher([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int child = 0;
    while (child == 0 && std::chrono::steady_clock::now() < deadline) {
      for (const auto& p : os::descendants_of(::getpid())) {
        std::ifstream sc("/proc/" + std::to_string(p.pid) + "/syscall");
        int nr = -1;
        if (sc >> nr && nr == SYS_openat) child = p.pid;  // waiting for the log's reader
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (child == 0) return;
    const auto status = "/proc/" + std::to_string(child) + "/status";
    seen.caught = status_line(status, "SigCgt");
    seen.blocked = status_line(status, "SigBlk");
    if (interrupt_it) ::kill(child, SIGINT);
    const int fd = ::open(log.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    char buf[4096];
    for (pollfd p{fd, POLLIN, 0}; ::poll(&p, 1, 3000) > 0;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      seen.output.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
  });
  {
    ScopedStopHandler suite_like(count_stop);  // the suite catches SIGINT and SIGTERM
    seen.exit_code = run_suite_child(program, {}, log);
  }
  watcher.join();
  std::filesystem::remove_all(dir);
  return seen;
}

// Between fork and exec the run's child must not carry the suite's handlers (a Ctrl-C then
// would run the suite's interrupt logic in the child, and be swallowed), and it execs with
// the suite's own mask.
TEST(RunSuiteChild, TheChildDropsTheSuitesHandlersBeforeSignalsCanReachIt) {
  const std::string own_mask = status_line("/proc/thread-self/status", "SigBlk");
  const CaughtChild seen = fork_a_run_and_catch_it(false);
  ASSERT_FALSE(seen.caught.empty()) << "the child was never seen waiting for its log";
  EXPECT_FALSE(has_signal(seen.caught, SIGINT)) << "the suite's SIGINT handler, before exec: " << seen.caught;
  EXPECT_FALSE(has_signal(seen.caught, SIGTERM)) << "the suite's SIGTERM handler, before exec: " << seen.caught;
  EXPECT_EQ(seen.exit_code, 0);
  EXPECT_NE(seen.output.find(own_mask + "\n"), std::string::npos)
      << "the program did not start with the suite's mask (" << own_mask << "):\n" << seen.output;
}

// A SIGINT that reaches the child before exec takes the child's default action: it is not
// run through the suite's handler and swallowed, the child going on to start the run.
TEST(RunSuiteChild, ASigintBeforeExecIsNotTakenByTheSuitesHandler) {
  const int stops = g_test_stops.load();
  const CaughtChild seen = fork_a_run_and_catch_it(true);
  ASSERT_FALSE(seen.caught.empty()) << "the child was never seen waiting for its log";
  EXPECT_TRUE(has_signal(seen.blocked, SIGINT)) << "SIGINT could arrive before the handlers were reset: "
                                                << seen.blocked;
  EXPECT_EQ(seen.exit_code, -1) << "the child went on to exec the run:\n" << seen.output;
  EXPECT_EQ(seen.output, "");
  EXPECT_EQ(g_test_stops.load(), stops);
}

}  // namespace
}  // namespace fencecheck
