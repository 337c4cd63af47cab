// Opening checker input (input_file.h): only regular files, and never a hang on a FIFO,
// for every reader (history.jsonl, resource.jsonl, history.edn).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "checkers/edn/edn_history_reader.h"
#include "checkers/history_reader.h"
#include "checkers/input_file.h"
#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

// Runs `open` in a forked child that SIGALRM kills after 10 s, so that a reader which
// blocks on a FIFO fails this test instead of hanging it. Returns the message of the
// exception `open` threw, or says what happened instead.
std::string error_in_child(const std::function<void()>& open) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(10);
    std::string msg = "opened without an error";
    try {
      open();
    } catch (const std::exception& e) {
      msg = std::string("error: ") + e.what();
    }
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) +
           (WTERMSIG(status) == SIGALRM ? " after 10 s: it blocked on the FIFO" : "");
  }
  return out;
}

std::string make_fifo(const HistoryBuilder& h, const std::string& name) {
  std::string path = h.dir() + "/" + name;
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
  return path;
}

void expect_fifo_refused(const std::string& got, const std::string& path) {
  EXPECT_EQ(got, "error: " + path + ":0: not a regular file but a FIFO (named pipe): fencecheck reads " +
                     "histories and logs only from regular files, so that it never waits on a writer; copy it " +
                     "to a file first");
}

TEST(InputFile, EveryReaderRefusesAFifoAtOnce) {
  HistoryBuilder h;
  std::string history = make_fifo(h, "history.jsonl");
  std::string resource = make_fifo(h, "resource.jsonl");
  std::string edn = make_fifo(h, "history.edn");
  expect_fifo_refused(error_in_child([&] { HistoryReader r(history); }), history);
  expect_fifo_refused(error_in_child([&] { ResourceLogReader r(resource); }), resource);
  expect_fifo_refused(error_in_child([&] { EdnHistoryReader r(edn); }), edn);
  expect_fifo_refused(error_in_child([&] { open_input_stream(edn); }), edn);
}

TEST(InputFile, TheWholeCheckRefusesAFifoResourceLog) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1);
  CheckRequest req;
  req.history = h.history_path();
  req.resource = make_fifo(h, "resource.jsonl");
  expect_fifo_refused(error_in_child([&] { run_checks(req); }), *req.resource);
}

TEST(InputFile, DevicesDirectoriesAndMissingFilesAreRefusedWithASentence) {
  auto message = [](const std::string& path) -> std::string {
    try {
      open_input_file(path);
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), 0u);
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("/dev/null").find("/dev/null:0: not a regular file but a character device"), std::string::npos);
  EXPECT_NE(message("/tmp").find("/tmp:0: not a regular file but a directory"), std::string::npos);
  EXPECT_EQ(message("/nonexistent/h.jsonl"), "/nonexistent/h.jsonl:0: cannot open: No such file or directory");
}

TEST(InputFile, ASymlinkToARegularFileIsRead) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1);
  std::string link = h.dir() + "/link.jsonl";
  std::filesystem::create_symlink(h.history_path(), link);
  HistoryReader r(link);
  Event e;
  EXPECT_TRUE(r.next(e));
}

// The stream is read through its buffer, as the EDN parser does: get a '#', peek at the
// next character (which may refill the buffer), step back to re-read the '#'. That must
// work at every position, block boundaries included, and every byte must come back.
TEST(InputFile, StreamReturnsEveryByteAndStepsBackAcrossRefills) {
  HistoryBuilder h;
  std::string path = h.dir() + "/big.edn";
  std::string text;
  for (std::size_t i = 0; i < 200'000; ++i) text += static_cast<char>('a' + i % 23);
  std::ofstream(path, std::ios::binary) << text;
  auto in = open_input_stream(path);
  std::streambuf* buf = in->rdbuf();
  std::string got;
  for (int c; (c = buf->sbumpc()) != std::char_traits<char>::eof();) {
    got += static_cast<char>(c);
    buf->sgetc();
    ASSERT_NE(buf->sungetc(), std::char_traits<char>::eof()) << "at byte " << got.size();
    ASSERT_EQ(buf->sbumpc(), c) << "at byte " << got.size();
  }
  EXPECT_EQ(got, text);
}

}  // namespace
}  // namespace fencecheck::testing
