// HistoryRecorder: what it writes, read back with the checkers' own HistoryReader, also
// when many client threads and the nemesis record at once.
#include "harness/run/history_recorder.h"

#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <map>
#include <thread>

#include "checkers/history_reader.h"
#include "platform/runtime.h"
#include "tests/run/temp_dir.h"

namespace fencecheck::testing {
namespace {

using json = nlohmann::json;

std::vector<Event> read_all(const std::filesystem::path& path) {
  HistoryReader reader(path.string());
  std::vector<Event> events;
  Event e;
  while (reader.next(e)) events.push_back(e);
  EXPECT_TRUE(reader.warnings().empty());
  return events;
}

std::vector<json> raw_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

TEST(HistoryRecorder, WritesTheContractsFields) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  {
    HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
    h.record(1, OpType::kInvoke, OpFn::kAcquire, "l0", nullptr, "c1");
    h.record(1, OpType::kOk, OpFn::kAcquire, "l0", {{"token", 4}}, "c1");
    h.record_nemesis("pause", {{"fault", "pause-holder"}, {"targets", {"c1"}}});
    h.record(1, OpType::kInvoke, OpFn::kRelease, "l0", {{"token", 4}}, "c1");
    h.record(1, OpType::kInfo, OpFn::kRelease, "l0", {{"token", 4}}, "c1", "timed out");
    h.record(2, OpType::kInvoke, OpFn::kRead, "k0", nullptr, "c1");
    h.record(2, OpType::kFail, OpFn::kRead, "k0", nullptr, "c1", "refused");
    EXPECT_EQ(h.events(), 7u);
    EXPECT_EQ(h.ok(), 1u);
    EXPECT_EQ(h.failed(), 1u);
    EXPECT_EQ(h.unknown(), 1u);
  }
  auto lines = raw_lines(path);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[1], json({{"index", 1}, {"time", lines[1]["time"]}, {"process", 1}, {"type", "ok"},
                            {"f", "acquire"}, {"key", "l0"}, {"value", {{"token", 4}}}, {"node", "c1"}}));
  EXPECT_EQ(lines[2]["process"], "nemesis");
  EXPECT_EQ(lines[2]["type"], "info");
  EXPECT_EQ(lines[2]["f"], "pause");
  EXPECT_FALSE(lines[2].contains("key")) << lines[2];
  EXPECT_EQ(lines[2]["value"]["targets"], json::array({"c1"}));
  EXPECT_EQ(lines[4]["error"], "timed out");
  EXPECT_FALSE(lines[0].contains("error")) << "no error field without an error";

  auto events = read_all(path);
  ASSERT_EQ(events.size(), 7u);
  EXPECT_TRUE(events[2].is_nemesis());
  EXPECT_EQ(events[1].token, 4);
  EXPECT_GE(events[0].time, 0);
}

TEST(HistoryRecorder, ConcurrentWritersMakeAValidHistory) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  constexpr int kThreads = 8, kOps = 300;
  std::map<OpType, std::uint64_t> expected;
  {
    HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&h, t] {
        std::int64_t process = t + 1;  // one thread's processes never collide with another's
        for (int i = 0; i < kOps; ++i) {
          OpType outcome = i % 10 == 9 ? OpType::kInfo : i % 3 == 0 ? OpType::kFail : OpType::kOk;
          h.record(process, OpType::kInvoke, OpFn::kRead, "k0", nullptr, "c" + std::to_string(t));
          h.record(process, outcome, OpFn::kRead, "k0", outcome == OpType::kOk ? json::array({i}) : json(),
                   "c" + std::to_string(t));
          if (outcome == OpType::kInfo) process += kThreads;  // the info retired it
          if (t == 0 && i % 50 == 0) h.record_nemesis("pause", {{"targets", {"c1"}}});
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int i = 0; i < kOps; ++i) {
      ++expected[i % 10 == 9 ? OpType::kInfo : i % 3 == 0 ? OpType::kFail : OpType::kOk];
    }
    EXPECT_EQ(h.ok(), expected[OpType::kOk] * kThreads);
    EXPECT_EQ(h.failed(), expected[OpType::kFail] * kThreads);
    EXPECT_EQ(h.unknown(), expected[OpType::kInfo] * kThreads);
    EXPECT_EQ(h.events(), 2u * kThreads * kOps + kOps / 50);
  }
  std::vector<Event> events;
  ASSERT_NO_THROW(events = read_all(path));  // the reader validates index, time and pairing
  ASSERT_EQ(events.size(), 2u * kThreads * kOps + kOps / 50);
  std::map<OpType, std::uint64_t> seen;
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].index, i);
    if (i > 0) { EXPECT_GE(events[i].time, events[i - 1].time); }
    ++seen[events[i].type];
    if (events[i].is_nemesis()) { EXPECT_TRUE(events[i].key.empty()); }
  }
  EXPECT_EQ(seen[OpType::kInvoke], 1u * kThreads * kOps);
  EXPECT_EQ(seen[OpType::kOk], expected[OpType::kOk] * kThreads);
  EXPECT_EQ(seen[OpType::kInfo], expected[OpType::kInfo] * kThreads + kOps / 50);
}

// A server's message with bytes that are not UTF-8 (a latin-1 locale, a message cut
// mid-character) must not abort the run: the line is written with U+FFFD in their place.
TEST(HistoryRecorder, InvalidUtf8IsReplacedNotFatal) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  const std::string bad = "FATAL: r\xf4le \"x\" does not exist \xe2\x82";  // latin-1 ô, cut €
  {
    HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
    h.record(1, OpType::kInvoke, OpFn::kAcquire, "l0", nullptr, "c1");
    ASSERT_NO_THROW(h.record(1, OpType::kFail, OpFn::kAcquire, "l0", nullptr, "c1", bad));
    ASSERT_NO_THROW(h.record_nemesis("kill", {{"targets", {"n1"}}, {"log", "\xff\xfe"}}));
    EXPECT_EQ(h.events(), 3u);
  }
  auto lines = raw_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1]["error"], "FATAL: r\uFFFDle \"x\" does not exist \uFFFD") << lines[1];
  EXPECT_EQ(lines[2]["value"]["log"], "\uFFFD\uFFFD") << lines[2];
  EXPECT_EQ(read_all(path).size(), 3u);
}

TEST(HistoryRecorder, NeverOverwritesAnExistingFile) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  std::ofstream(path) << "precious\n";
  try {
    HistoryRecorder h(path, 0);
    FAIL() << "opened an existing history";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "precious\n");
}

TEST(HistoryRecorder, MissingDirectoryIsAClearError) {
  TempDir dir;
  auto path = dir.path() / "no-such-dir" / "history.jsonl";
  try {
    HistoryRecorder h(path, 0);
    FAIL() << "created a file in a missing directory";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create " + path.string()), std::string::npos) << e.what();
  }
}

TEST(HistoryRecorder, TimesCountFromT0) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  std::int64_t t0 = HistoryRecorder::monotonic_ns() - 2'000'000'000;  // the test began 2 s ago
  {
    HistoryRecorder h(path, t0);
    h.record_nemesis("pause", {{"targets", {"n1"}}});
  }
  auto events = read_all(path);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_GE(events[0].time, 2'000'000'000);
  EXPECT_LT(events[0].time, 60'000'000'000);
}

// Lines reach the file without anybody asking (a killed controller loses only the last few
// ms), and at once on flush().
TEST(HistoryRecorder, LinesReachTheFileByThemselvesAndAtOnceOnFlush) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
  h.record(1, OpType::kInvoke, OpFn::kAcquire, "l0", nullptr, "c1");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (raw_lines(path).size() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(raw_lines(path).size(), 1u);
  h.record(1, OpType::kOk, OpFn::kAcquire, "l0", {{"token", 1}}, "c1");
  h.flush();
  EXPECT_EQ(raw_lines(path).size(), 2u);
}

// A file size limit of 64 bytes while it lives, so that writes fail as on a full disk. The
// limit is the process's: restored whatever happens.
struct Limit {
  rlimit old{};
  void (*old_handler)(int);
  Limit() : old_handler(std::signal(SIGXFSZ, SIG_IGN)) {
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit small = old;
    small.rlim_cur = 64;
    ::setrlimit(RLIMIT_FSIZE, &small);
  }
  ~Limit() {
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
  }
};

// A write that fails (here: over the file size limit) is never silent: flush() and every
// later record() throw, naming the file.
TEST(HistoryRecorder, AFailedWriteIsThrownByTheNextFlushAndRecord) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
  {
    Limit limit;
    h.record(1, OpType::kInvoke, OpFn::kAcquire, "l0", nullptr, "c1");
    h.record(1, OpType::kOk, OpFn::kAcquire, "l0", {{"token", 1}}, "c1");
    try {
      h.flush();
      ADD_FAILURE() << "a write over the size limit did not throw";
    } catch (const HarnessError& e) {
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(h.record(1, OpType::kInvoke, OpFn::kRelease, "l0", nullptr, "c1"), HarnessError);
}

// The last lines, recorded after the run's last flush(), cannot be written: close() says
// so, naming the file, so that the run does not judge a history that lacks its end.
TEST(HistoryRecorder, CloseThrowsWhenTheLastLinesCannotBeWritten) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
  h.record(1, OpType::kInvoke, OpFn::kAcquire, "l0", nullptr, "c1");
  h.flush();  // the run's flush at the end of its test phase: all well so far
  Limit limit;
  h.record_nemesis("heal", {{"fault", "partition-halves"}});
  h.record(2, OpType::kInvoke, OpFn::kRead, "k0", nullptr, "c1");
  try {
    h.close();
    ADD_FAILURE() << "close() of a history whose last lines were not written did not throw";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + path.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(h.close(), HarnessError) << "a second close() must not make the loss look healed";
}

TEST(HistoryRecorder, CloseWritesEverythingAndRefusesLaterRecords) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
  h.record(1, OpType::kInvoke, OpFn::kAcquire, "l0", nullptr, "c1");
  h.record_nemesis("heal", {{"fault", "partition-halves"}});
  h.close();
  EXPECT_EQ(raw_lines(path).size(), 2u);
  try {
    h.record(1, OpType::kOk, OpFn::kAcquire, "l0", {{"token", 1}}, "c1");
    ADD_FAILURE() << "a line recorded after close() was taken (and would be lost)";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(h.close());
}

// What is written to fd 2 while it lives, through a pipe (gtest's capture goes to a file,
// which the size limit would cut short). Holds up to a pipe's 64 KiB.
class StderrPipe {
 public:
  StderrPipe() {
    if (::pipe(ends_) != 0) std::abort();
    saved_ = ::dup(2);
    ::dup2(ends_[1], 2);
  }
  ~StderrPipe() { restore(); }
  std::string text() {
    restore();
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(ends_[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    ::dup2(saved_, 2);
    ::close(saved_);
    ::close(ends_[1]);
    saved_ = -1;
  }
  int ends_[2]{-1, -1};
  int saved_ = -1;
};

// Without close() (a run that failed before it), the destructor cannot throw: a write error
// nobody heard of goes to stderr, naming the file; one already thrown is not repeated.
TEST(HistoryRecorder, TheDestructorTellsStderrOfAnErrorNobodyHeard) {
  TempDir dir;
  auto path = dir.path() / "history.jsonl";
  StderrPipe unheard;
  {
    Limit limit;  // outlives h: its destructor writes under the limit
    HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
    h.record(1, OpType::kInvoke, OpFn::kAcquire, "l0", nullptr, "c1");
    h.record(1, OpType::kOk, OpFn::kAcquire, "l0", {{"token", 1}}, "c1");
  }
  const std::string said = unheard.text();
  EXPECT_NE(said.find("cannot write " + path.string()), std::string::npos) << said;

  std::filesystem::remove(path);
  StderrPipe heard;
  {
    Limit limit;
    HistoryRecorder h(path, HistoryRecorder::monotonic_ns());
    h.record(1, OpType::kInvoke, OpFn::kAcquire, "l0", nullptr, "c1");
    h.record(1, OpType::kOk, OpFn::kAcquire, "l0", {{"token", 1}}, "c1");
    EXPECT_THROW(h.close(), HarnessError);
  }
  EXPECT_EQ(heard.text(), "") << "told twice";
}

}  // namespace
}  // namespace fencecheck::testing
