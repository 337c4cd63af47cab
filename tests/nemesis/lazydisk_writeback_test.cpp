// fclazydisk's write-back (nemesis/disk/writeback.h, FileTable::write_back) without FUSE:
// the aging decision, the check period, and write_back on a real backing file — nothing
// before the age, the whole overlay (also bytes younger than the age) after it, the age
// restarting when the overlay empties, a closed file's entry dropped once written back,
// and an unlinked file's dropped entry left alone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "nemesis/disk/file_table.h"
#include "nemesis/disk/writeback.h"

namespace fencecheck::lazydisk {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(LazydiskWriteback, DueOnceTheAgeHasPassed) {
  const Clock::time_point t0 = Clock::now();
  EXPECT_FALSE(writeback_due(false, t0, t0, 300ms));
  EXPECT_FALSE(writeback_due(false, t0, t0 + 299ms, 300ms));
  EXPECT_TRUE(writeback_due(false, t0, t0 + 300ms, 300ms));
  EXPECT_TRUE(writeback_due(false, t0, t0 + 1h, 300ms));
  EXPECT_FALSE(writeback_due(true, t0, t0 + 1h, 300ms)) << "nothing to write";
  EXPECT_FALSE(writeback_due(false, t0, t0 + 1h, 0ms)) << "0: never";
}

TEST(LazydiskWriteback, PeriodIsAQuarterWithinOneMsAndHalfASecond) {
  EXPECT_EQ(Writeback::period(300ms), 75ms);
  EXPECT_EQ(Writeback::period(30s), 500ms);
  EXPECT_EQ(Writeback::period(2ms), 1ms);
}

struct TempFile {
  fs::path path;
  int fd = -1;
  TempFile() {
    std::string tmpl = (fs::temp_directory_path() / "fc-writeback-XXXXXX").string();
    fd = ::mkstemp(tmpl.data());
    path = tmpl;
  }
  ~TempFile() {
    ::close(fd);
    fs::remove(path);
  }
  std::string contents() const {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  FileKey key() const {
    struct stat st;
    ::fstat(fd, &st);
    return FileKey::of(st);
  }
};

TEST(LazydiskWriteback, WritesTheWholeOverlayOnceItIsOld) {
  TempFile f;
  FileTable table;
  auto e = table.open(f.key());
  const Clock::time_point before = Clock::now();
  ASSERT_EQ(FileTable::write(*e, f.fd, 0, "AAAA", 4, false), 4);
  const Clock::time_point after = Clock::now();
  EXPECT_EQ(table.write_back(before, 300ms), 0u);
  EXPECT_EQ(table.write_back(before + 299ms, 300ms), 0u) << "younger than 300 ms";
  EXPECT_EQ(f.contents(), "");
  ASSERT_EQ(FileTable::write(*e, f.fd, 4, "bb", 2, false), 2);  // younger, same overlay
  EXPECT_EQ(table.write_back(after + 300ms, 300ms), 6u);
  EXPECT_EQ(f.contents(), "AAAAbb");
  EXPECT_EQ(table.stats().unsynced_bytes, 0u);
  EXPECT_EQ(table.stats().written_back_bytes, 6u);

  // The age restarts with the next write into the emptied overlay.
  const Clock::time_point second = Clock::now();
  ASSERT_EQ(FileTable::write(*e, f.fd, 6, "cc", 2, false), 2);
  EXPECT_EQ(table.write_back(second + 100ms, 300ms), 0u);
  EXPECT_EQ(table.write_back(Clock::now() + 300ms, 300ms), 2u);
  EXPECT_EQ(f.contents(), "AAAAbbcc");
  EXPECT_EQ(table.stats().written_back_bytes, 8u);
  EXPECT_NE(table.find(f.key()), nullptr) << "still open";
}

TEST(LazydiskWriteback, ClosedFileDroppedOnceWrittenBack) {
  TempFile f;
  FileTable table;
  auto e = table.open(f.key());
  ASSERT_EQ(FileTable::write(*e, f.fd, 0, "xyz", 3, false), 3);
  table.release(f.key(), e, f.fd);
  ASSERT_NE(table.find(f.key()), nullptr) << "kept for its unsynced bytes";
  EXPECT_EQ(table.write_back(Clock::now() + 1s, 300ms), 3u);
  EXPECT_EQ(f.contents(), "xyz");
  EXPECT_EQ(table.find(f.key()), nullptr);
  EXPECT_EQ(e->fd, -1) << "its fd closed";
  EXPECT_EQ(table.stats().open_files, 0u);
}

TEST(LazydiskWriteback, UnlinkedFileIsNotWritten) {
  TempFile f;
  FileTable table;
  auto e = table.open(f.key());
  ASSERT_EQ(FileTable::write(*e, f.fd, 0, "gone", 4, false), 4);
  table.release(f.key(), e, f.fd);
  table.unlinked(f.key());
  EXPECT_EQ(table.write_back(Clock::now() + 1s, 300ms), 0u);
  EXPECT_EQ(f.contents(), "");
}

// The thread itself: started with 20 ms, it writes a file back within a second; stop
// joins it, and a second stop does nothing.
TEST(LazydiskWriteback, ThreadWritesBackAndStops) {
  TempFile f;
  FileTable table;
  auto e = table.open(f.key());
  ASSERT_EQ(FileTable::write(*e, f.fd, 0, "thread", 6, false), 6);
  Writeback wb;
  wb.start(&table, 20ms);
  for (int i = 0; i < 100 && f.contents().empty(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(f.contents(), "thread");
  wb.stop();
  wb.stop();
  table.release(f.key(), e, f.fd);
}

}  // namespace
}  // namespace fencecheck::lazydisk
