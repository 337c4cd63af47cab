// os::run_command with more input than a pipe holds, os::write_sync_close's errors, and
// the UTF-8 repair every document with outside strings goes through (platform/json_text.h).
#include "platform/os_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "platform/json_text.h"
#include "platform/runtime.h"
#include "tests/runtime/test_util.h"

namespace fencecheck {
namespace {

using testing::TempDir;

// Runs body in a child and gives its exit code, or nullopt if it has not exited within
// timeout: a deadlock must fail the test, not hang the suite. (A bound, not a speed check.)
template <typename Body>
std::optional<int> exit_code_within(Body body, std::chrono::seconds timeout) {
  pid_t pid = testing::fork_child([&] {
    if (!body()) ::_exit(2);
  });
  auto until = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// `cat` echoes its input while we are still writing it: with more than a pipe's 64 KiB
// both ways, a writer that does not read meanwhile waits forever.
TEST(RunCommand, MoreThanAPipeOfInputThroughCat) {
  std::string input;
  for (int i = 0; input.size() < 1024 * 1024; ++i) input += "line " + std::to_string(i) + "\n";
  auto code = exit_code_within([&] { return os::run_command({"cat"}, input).output == input; },
                               std::chrono::seconds(60));
  ASSERT_TRUE(code.has_value()) << "run_command deadlocked on " << input.size() << " bytes of input";
  EXPECT_EQ(*code, 0) << "cat's output was not its input";
}

TEST(RunCommand, ACommandThatIgnoresItsInputStillEnds) {
  std::string input(256 * 1024, 'x');
  auto result = os::run_command({"true"}, input);
  EXPECT_EQ(result.status, 0);
}

TEST(WriteSyncClose, WritesTheWholeText) {
  TempDir tmp;
  auto file = tmp.path() / "f";
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  std::string text(300 * 1024, 'y');
  os::write_sync_close(fd, text, "test file " + file.string());
  EXPECT_EQ(testing::read_text(file), text);
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the descriptor was left open";
}

TEST(WriteSyncClose, AFailedWriteNamesTheFile) {
  int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  try {
    os::write_sync_close(fd, "data", "run state /run/x.json");
    FAIL() << "a write to a full device was taken for done";
  } catch (const HarnessError& e) {
    EXPECT_STREQ(e.what(), "cannot write run state /run/x.json: No space left on device");
  }
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the descriptor was left open";
}

// fsync on a pipe fails (EINVAL): the stand-in for a disk that lost the data.
TEST(WriteSyncClose, AFailedFsyncNamesTheFile) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  try {
    os::write_sync_close(p[1], "data", "run state /run/x.json");
    FAIL() << "data that could not be synced was taken for written";
  } catch (const HarnessError& e) {
    EXPECT_STREQ(e.what(), "cannot fsync run state /run/x.json: Invalid argument");
  }
  EXPECT_EQ(::fcntl(p[1], F_GETFD), -1) << "the descriptor was left open";
  ::close(p[0]);
}

TEST(JsonText, InvalidUtf8IsReplacedNotThrown) {
  nlohmann::json j = {{"error", "r\xf4le \xe2\x82"}};
  EXPECT_THROW(j.dump(), nlohmann::json::type_error);  // what the helper exists for
  EXPECT_EQ(dump_json(j), "{\"error\":\"r\xEF\xBF\xBDle \xEF\xBF\xBD\"}");
  EXPECT_EQ(valid_utf8("ok \xc3\xa9"), "ok \xc3\xa9");  // valid text is unchanged
  EXPECT_EQ(valid_utf8("\xff"), "\xEF\xBF\xBD");
  EXPECT_NO_THROW(nlohmann::json(valid_utf8("a\xc3")).dump());
}

}  // namespace
}  // namespace fencecheck
