// The one-copy helpers of platform/: /proc/<pid>/stat parsing and the process questions
// built on it (proc_stat.h), UniqueFd and pipes (unique_fd.h), connect with a deadline and
// a free port (tcp.h), the atomic file writer (atomic_file.h), and program lookup driven
// by the caller's directories (os_util.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "platform/atomic_file.h"
#include "platform/errors.h"
#include "platform/os_util.h"
#include "platform/proc_stat.h"
#include "platform/tcp.h"
#include "platform/unique_fd.h"
#include "tests/runtime/test_util.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::TempDir;

// A stat line with `comm` as the command name and the fields proc(5) numbers 3..22.
std::string stat_line(const std::string& comm) {
  return "4242 (" + comm + ") T 17 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 987654 1 2 3";
}

TEST(ProcStat, ParsesTheFieldsAfterTheLastParenthesis) {
  for (const std::string comm : {"redis-server", "a b", "x) S 1 2 (y", ")"}) {
    auto s = os::parse_proc_stat(stat_line(comm));
    ASSERT_TRUE(s) << comm;
    EXPECT_EQ(s->pid, 4242) << comm;
    EXPECT_EQ(s->state, 'T') << comm;
    EXPECT_EQ(s->ppid, 17) << comm;
    EXPECT_EQ(s->pgrp, 4240) << comm;
    EXPECT_EQ(s->start_time, 987654u) << comm;
  }
}

TEST(ProcStat, MalformedLinesAreNothingNotACrash) {
  for (const std::string line : {"", "4242", "4242 (x)", "4242 (x) T 17 4240", "abc (x) T 1 2 3",
                                 "4242 (x) T notanumber 4240 4240 0 -1 1 1 0 0 0 1 2 0 0 20 0 3 0 9"}) {
    EXPECT_FALSE(os::parse_proc_stat(line)) << "'" << line << "'";
  }
}

TEST(ProcStat, ReadsThisProcessAndNotAnAbsentOne) {
  auto self = os::read_proc_stat(::getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->pid, ::getpid());
  EXPECT_EQ(self->ppid, ::getppid());
  EXPECT_EQ(self->pgrp, ::getpgrp());
  EXPECT_EQ(os::process_start_time(::getpid()), self->start_time);
  EXPECT_TRUE(os::process_is(::getpid(), self->start_time));
  EXPECT_FALSE(os::process_is(::getpid(), self->start_time + 1)) << "a reused pid must not match";
  EXPECT_FALSE(os::read_proc_stat(0));
  EXPECT_FALSE(os::read_proc_stat(-1));
  EXPECT_EQ(os::process_state(-1), '\0');
  EXPECT_FALSE(os::threads_of(::getpid()).empty());
}

// A child that forks a grandchild; both are found below us, the grandchild after its
// parent, and a stopped child reads as stopped only once SIGSTOP took.
TEST(ProcStat, DescendantsAndStoppedProcesses) {
  pid_t child = ::fork();
  if (child == 0) {
    if (::fork() == 0) ::pause();
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  std::vector<os::ProcStat> below;
  ASSERT_TRUE(testing::eventually([&] { return (below = os::descendants_of(child)).size() == 1; }));
  pid_t grandchild = below[0].pid;
  EXPECT_EQ(below[0].ppid, child);
  auto mine = os::descendants_of(::getpid());
  auto at = [&](pid_t pid) {
    return std::find_if(mine.begin(), mine.end(), [&](const os::ProcStat& s) { return s.pid == pid; });
  };
  ASSERT_NE(at(child), mine.end());
  ASSERT_NE(at(grandchild), mine.end());
  EXPECT_LT(at(child), at(grandchild));

  EXPECT_FALSE(os::process_stopped(child));
  ::kill(child, SIGSTOP);
  EXPECT_TRUE(testing::eventually([&] { return os::process_stopped(child); }));
  EXPECT_EQ(os::process_state(child), 'T');
  ::kill(grandchild, SIGKILL);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(os::process_stopped(child)) << "a reaped process is not a stopped one";
}

TEST(ProcStat, HaltedStates) {
  for (char c : {'T', 't', 'Z', 'X', '\0'}) EXPECT_TRUE(os::is_halted_state(c)) << c;
  for (char c : {'R', 'S', 'D', 'I'}) EXPECT_FALSE(os::is_halted_state(c)) << c;
}

TEST(UniqueFd, ClosesOnResetAndDestructionAndMovesOwnership) {
  auto [read_end, write_end] = make_pipe();
  int r = read_end.get(), w = write_end.get();
  EXPECT_TRUE(read_end.valid() && write_end.valid());
  EXPECT_NE(::fcntl(r, F_GETFD) & FD_CLOEXEC, 0) << "pipes are close-on-exec";
  UniqueFd moved = std::move(write_end);
  EXPECT_FALSE(write_end.valid());
  EXPECT_EQ(moved.get(), w);
  moved.reset();
  EXPECT_EQ(::fcntl(w, F_GETFD), -1) << "reset() did not close";
  {
    UniqueFd scoped(read_end.release());
    EXPECT_FALSE(read_end.valid());
  }
  EXPECT_EQ(::fcntl(r, F_GETFD), -1) << "the destructor did not close";
}

TEST(Tcp, ConnectsToAListenerAndNotToAFreePort) {
  auto [listener, port] = testing::loopback_listener();
  UniqueFd conn = tcp_connect("127.0.0.1", port, 2s);
  EXPECT_TRUE(conn.valid());
  EXPECT_NE(::fcntl(conn.get(), F_GETFL) & O_NONBLOCK, 0);
  EXPECT_TRUE(tcp_connect_within("127.0.0.1", port, 2s));
  listener.reset();
  EXPECT_FALSE(tcp_connect_within("127.0.0.1", port, 2s)) << "nobody listens any more";

  std::uint16_t free = free_loopback_port();
  EXPECT_GT(free, 0);
  EXPECT_FALSE(tcp_connect_within("127.0.0.1", free, 2s));
  EXPECT_THROW(tcp_connect("not-an-address", free, 2s), HarnessError);
}

TEST(Tcp, WaitForFdSeesDataAndGivesUpAtTheDeadline) {
  auto [read_end, write_end] = make_pipe();
  EXPECT_FALSE(wait_for_fd(read_end.get(), POLLIN, std::chrono::steady_clock::now()));
  ASSERT_EQ(::write(write_end.get(), "x", 1), 1);
  EXPECT_TRUE(wait_for_fd(read_end.get(), POLLIN, std::chrono::steady_clock::now() + 2s));
}

TEST(AtomicFile, ReplacesContentAndLeavesNoTemporary) {
  TempDir tmp;
  fs::path file = tmp.path() / "state.json";
  write_file_atomically(file, "old");
  write_file_atomically(file, "new", 0600);
  EXPECT_EQ(testing::read_text(file), "new");
  EXPECT_EQ((fs::status(file).permissions() & fs::perms::all), fs::perms::owner_read | fs::perms::owner_write)
      << "the replacement has the mode asked for (a run state file is private)";
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path())) ++entries;
  EXPECT_EQ(entries, 1) << "a temporary was left beside the file";
}

TEST(AtomicFile, TempBesideIsWrittenAndAFailureKeepsTheOldFile) {
  TempDir tmp;
  fs::path file = tmp.path() / "f";
  fs::path t = write_temp_beside(file, "text", 0600);
  EXPECT_EQ(t.parent_path(), tmp.path());
  EXPECT_EQ(testing::read_text(t), "text");
  EXPECT_FALSE(fs::exists(file));
  write_file_atomically(file, "kept");
  try {
    write_file_atomically(tmp.path() / "no-such-dir" / "f", "x");
    FAIL() << "a file in a missing directory was taken for written";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-dir"), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing::read_text(file), "kept");
}

TEST(ProgramLookup, ExtraDirsAndNewestVersionFirst) {
  TempDir tmp;
  for (const char* v : {"9", "15", "10.2"}) {
    fs::create_directories(tmp.path() / "tool" / v / "bin");
    std::ofstream(tmp.path() / "tool" / v / "bin" / "fc-test-prog") << "#!/bin/sh\n";
    fs::permissions(tmp.path() / "tool" / v / "bin" / "fc-test-prog", fs::perms::owner_all);
  }
  const std::string pattern = (tmp.path() / "tool" / "*" / "bin").string();
  auto dirs = os::program_search_path({pattern});
  auto pos = [&](const std::string& v) {
    return std::find(dirs.begin(), dirs.end(), (tmp.path() / "tool" / v / "bin").string()) - dirs.begin();
  };
  EXPECT_LT(pos("15"), pos("10.2"));
  EXPECT_LT(pos("10.2"), pos("9"));
  EXPECT_LT(pos("9"), static_cast<long>(dirs.size()));
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), "/usr/sbin"), dirs.end());
  EXPECT_EQ(os::find_executable("fc-test-prog", {pattern}), (tmp.path() / "tool/15/bin/fc-test-prog").string());
  EXPECT_EQ(os::find_executable("fc-test-prog"), std::nullopt) << "found without being told where";
}

TEST(ProgramLookup, InstallHintNamesThePackageItIsGiven) {
  EXPECT_EQ(os::install_hint("iproute2"), "install the Debian package iproute2, e.g. with scripts/setup.sh");
  EXPECT_EQ(os::install_hint(""),
            "install the Debian package that provides it, e.g. with scripts/setup.sh");
}

}  // namespace
}  // namespace fencecheck
