// fclazydisk (nemesis/disk/fclazydisk.cpp) mounted for real: data written through the
// mount lives in the daemon until fsync, so SIGKILL of the daemon loses exactly what was
// not fsync'd (a file made and never synced survives with its backing size, 0), the
// unsynced bytes follow a rename, truncate and unlink act on them, a clean SIGTERM flushes
// everything, four threads appending and fsyncing lose nothing they synced, and with
// --writeback-ms a write old enough survives a crash without fsync while a fresh one does not.
// Needs root and /dev/fuse (skipped otherwise). Every mount is detached and every temp
// directory removed when a test ends, also when it fails.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fencecheck::lazydisk {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A temp directory with backing/ and mnt/; the destructor detaches mnt and removes it all.
struct TempDirs {
  fs::path root, backing, mnt;
  TempDirs() {
    std::string tmpl = (fs::temp_directory_path() / "fc-lazydisk-XXXXXX").string();
    root = ::mkdtemp(tmpl.data());
    backing = root / "backing";
    mnt = root / "mnt";
    fs::create_directories(backing);
    fs::create_directories(mnt);
  }
  ~TempDirs() {
    ::umount2(mnt.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

// One fclazydisk process on dirs; the destructor kills it (SIGKILL) and detaches the mount.
class LazyDisk {
 public:
  explicit LazyDisk(const TempDirs& dirs) : dirs_(dirs) {}
  ~LazyDisk() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::umount2(dirs_.mnt.c_str(), MNT_DETACH);
  }
  // Starts it and waits until the mount is there (mnt's st_dev changes).
  ::testing::AssertionResult start(std::vector<std::string> options = {}) {
    struct stat parent;
    ::stat(dirs_.root.c_str(), &parent);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::string exe = FC_LAZYDISK, b = dirs_.backing.string(), m = dirs_.mnt.string();
    std::vector<char*> argv = {exe.data()};
    for (auto& o : options) argv.push_back(o.data());
    argv.insert(argv.end(), {b.data(), m.data(), nullptr});
    int rc = ::posix_spawn(&pid_, exe.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return ::testing::AssertionFailure() << "posix_spawn: " << rc;
    for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
      struct stat st;
      if (::stat(dirs_.mnt.c_str(), &st) == 0 && st.st_dev != parent.st_dev) return ::testing::AssertionSuccess();
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return ::testing::AssertionFailure() << "fclazydisk exited: " << stderr_text();
      }
      std::this_thread::sleep_for(10ms);
    }
    return ::testing::AssertionFailure() << "no mount after 10 s";
  }
  // The power failure: SIGKILL, then the dead mount detached.
  void crash() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    ::umount2(dirs_.mnt.c_str(), MNT_DETACH);
  }
  // A clean stop: SIGTERM; returns the wait status.
  int stop() {
    int status = -1;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  // SIGUSR1, then the stats line it printed.
  std::string stats() {
    std::size_t before = stderr_text().size();
    ::kill(pid_, SIGUSR1);
    for (int i = 0; i < 200; ++i) {
      std::string text = stderr_text();
      if (auto nl = text.find('\n', before); nl != std::string::npos) return text.substr(before, nl - before);
      std::this_thread::sleep_for(10ms);
    }
    return "";
  }
  std::string stderr_text() const {
    std::ifstream in(log());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  fs::path log() const { return dirs_.root / "fclazydisk.log"; }
  const TempDirs& dirs_;
  pid_t pid_ = -1;
};

bool write_all(int fd, const std::string& data) { return ::write(fd, data.data(), data.size()) == ssize_t(data.size()); }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

off_t size_of(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? st.st_size : -1;
}

class Lazydisk : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (mount)";
    if (!fs::exists("/dev/fuse")) GTEST_SKIP() << "no /dev/fuse";
    ASSERT_TRUE(disk_.start());
  }
  fs::path mnt(const std::string& name) const { return dirs_.mnt / name; }
  fs::path backing(const std::string& name) const { return dirs_.backing / name; }

  TempDirs dirs_;
  LazyDisk disk_{dirs_};
};

TEST_F(Lazydisk, WritesReadBackAndAppendsMerge) {
  int fd = ::open(mnt("a").c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644);
  ASSERT_GE(fd, 0);
  std::string expected;
  for (int i = 0; i < 256; ++i) {
    std::string chunk(4096, char('a' + i % 26));
    ASSERT_TRUE(write_all(fd, chunk));
    expected += chunk;
  }
  ASSERT_EQ(::close(fd), 0);
  EXPECT_EQ(size_of(mnt("a")), off_t(expected.size()));
  EXPECT_EQ(read_file(mnt("a")), expected);  // after close: the bytes stay with the daemon
  EXPECT_EQ(size_of(backing("a")), 0);       // and nowhere else yet
  EXPECT_NE(disk_.stats().find("1 files with unsynced data, 1048576 bytes unsynced in 1 extents"), std::string::npos)
      << disk_.stderr_text();
  // A write in the middle and one past the end (a hole of zeros between).
  fd = ::open(mnt("a").c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "MID", 3, 1000), 3);
  ASSERT_EQ(::pwrite(fd, "END", 3, off_t(expected.size()) + 10), 3);
  ::close(fd);
  expected.replace(1000, 3, "MID");
  expected += std::string(10, '\0') + "END";
  EXPECT_EQ(read_file(mnt("a")), expected);
  // O_TRUNC drops it all.
  fd = ::open(mnt("a").c_str(), O_WRONLY | O_TRUNC);
  ASSERT_TRUE(write_all(fd, "new"));
  ::close(fd);
  EXPECT_EQ(read_file(mnt("a")), "new");
}

TEST_F(Lazydisk, CrashKeepsWhatWasFsyncedOnly) {
  int fd = ::open(mnt("f").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(write_all(fd, "synced-A;"));
  ASSERT_EQ(::fsync(fd), 0);
  EXPECT_EQ(read_file(backing("f")), "synced-A;");
  ASSERT_TRUE(write_all(fd, "lost-B;"));
  ASSERT_EQ(::close(fd), 0);
  fd = ::open(mnt("never").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_TRUE(write_all(fd, "never synced"));
  ::close(fd);
  ASSERT_EQ(::mkdir(mnt("d").c_str(), 0755), 0);
  EXPECT_EQ(read_file(mnt("f")), "synced-A;lost-B;");

  disk_.crash();
  ASSERT_TRUE(disk_.start());
  EXPECT_EQ(read_file(mnt("f")), "synced-A;");
  EXPECT_TRUE(fs::exists(mnt("never")));  // metadata is durable at once; data was not
  EXPECT_EQ(size_of(mnt("never")), 0);
  EXPECT_TRUE(fs::is_directory(mnt("d")));
}

TEST_F(Lazydisk, UnsyncedDataFollowsARename) {
  int fd = ::open(mnt("tmp").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_TRUE(write_all(fd, "renamed data"));
  ::close(fd);
  fd = ::open(mnt("old").c_str(), O_CREAT | O_WRONLY, 0644);  // replaced by the rename
  ASSERT_TRUE(write_all(fd, "replaced"));
  ::close(fd);
  ASSERT_EQ(::rename(mnt("tmp").c_str(), mnt("old").c_str()), 0);
  EXPECT_EQ(read_file(mnt("old")), "renamed data");
  fd = ::open(mnt("old").c_str(), O_RDONLY);
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
  // Another rename with no fsync after it: the data is lost, the name kept.
  fd = ::open(mnt("tmp2").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_TRUE(write_all(fd, "not synced"));
  ::close(fd);
  ASSERT_EQ(::rename(mnt("tmp2").c_str(), mnt("new2").c_str()), 0);
  ASSERT_EQ(::renameat2(AT_FDCWD, mnt("old").c_str(), AT_FDCWD, mnt("new2").c_str(), RENAME_NOREPLACE), -1);
  EXPECT_EQ(errno, EEXIST);

  disk_.crash();
  ASSERT_TRUE(disk_.start());
  EXPECT_EQ(read_file(mnt("old")), "renamed data");
  EXPECT_FALSE(fs::exists(mnt("tmp")));
  EXPECT_EQ(size_of(mnt("new2")), 0);
}

TEST_F(Lazydisk, TruncateAndUnlinkActOnUnsyncedData) {
  int fd = ::open(mnt("t").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_TRUE(write_all(fd, std::string(100, 'x')));
  ASSERT_EQ(::fsync(fd), 0);
  ASSERT_EQ(::pwrite(fd, "yyyyy", 5, 95), 5);  // unsynced, over the synced tail
  ASSERT_EQ(::ftruncate(fd, 10), 0);
  ASSERT_EQ(::pwrite(fd, "zz", 2, 50), 2);
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 52);
  ::close(fd);
  EXPECT_EQ(read_file(mnt("t")), std::string(10, 'x') + std::string(40, '\0') + "zz");
  ASSERT_EQ(::truncate(mnt("t").c_str(), 51), 0);  // by path, through the overlay
  EXPECT_EQ(read_file(mnt("t")), std::string(10, 'x') + std::string(40, '\0') + "z");

  fd = ::open(mnt("u").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_TRUE(write_all(fd, "to be unlinked"));
  ::close(fd);
  ASSERT_EQ(::unlink(mnt("u").c_str()), 0);
  fd = ::open(mnt("u").c_str(), O_CREAT | O_RDWR, 0644);
  ::close(fd);
  EXPECT_EQ(read_file(mnt("u")), "");
  // Only t's unsynced "z" is left in the daemon.
  EXPECT_NE(disk_.stats().find("1 files with unsynced data, 1 bytes unsynced"), std::string::npos)
      << disk_.stderr_text();

  disk_.crash();
  ASSERT_TRUE(disk_.start());
  EXPECT_EQ(read_file(mnt("t")), std::string(10, 'x') + std::string(41, '\0'))
      << "the truncates are durable, the data after them lost";
}

TEST_F(Lazydisk, CleanStopFlushesEverything) {
  for (int i = 0; i < 3; ++i) {
    int fd = ::open(mnt("c" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_TRUE(write_all(fd, "clean " + std::to_string(i)));
    ::close(fd);
  }
  EXPECT_EQ(size_of(backing("c0")), 0);
  int status = disk_.stop();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << disk_.stderr_text();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(read_file(backing("c" + std::to_string(i))), "clean " + std::to_string(i));
}

// direct_io (the default) refuses a shared mapping (ENODEV; a private one works);
// --no-direct-io allows it, and still loses unsynced writes in a crash, while a shared
// mapping's msync(MS_SYNC) is an fsync.
TEST_F(Lazydisk, SharedMmapNeedsNoDirectIo) {
  int fd = ::open(mnt("m").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_EQ(::ftruncate(fd, 4096), 0);
  void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  EXPECT_EQ(p, MAP_FAILED);
  EXPECT_EQ(errno, ENODEV);
  p = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  ::munmap(p, 4096);
  ::close(fd);

  disk_.crash();
  ASSERT_TRUE(disk_.start({"--no-direct-io"}));
  fd = ::open(mnt("m").c_str(), O_RDWR);
  p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED) << std::strerror(errno);
  std::memcpy(p, "mapped", 6);
  ASSERT_EQ(::msync(p, 4096, MS_SYNC), 0);
  ::munmap(p, 4096);
  ASSERT_EQ(::pwrite(fd, "LOST", 4, 100), 4);
  EXPECT_EQ(read_file(mnt("m")).substr(100, 4), "LOST");
  ::close(fd);

  disk_.crash();
  ASSERT_TRUE(disk_.start());
  std::string data = read_file(mnt("m"));
  ASSERT_EQ(data.size(), 4096u);
  EXPECT_EQ(data.substr(0, 6), "mapped");
  EXPECT_EQ(data.substr(100, 4), std::string(4, '\0'));
}

// --writeback-ms 300 (checked every 75 ms): A, 1.5 s old, was written back to the backing
// file without a fsync and survives the crash; B, 100 ms old at the crash, does not. A
// clean stop with the write-back thread running still exits 0 and flushes.
TEST_F(Lazydisk, WritebackKeepsOldWritesThroughACrash) {
  disk_.crash();
  ASSERT_TRUE(disk_.start({"--writeback-ms", "300"}));
  int fd = ::open(mnt("wb").c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(write_all(fd, "old-A;"));
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(read_file(backing("wb")), "old-A;") << "written back, not fsync'd";
  EXPECT_NE(disk_.stats().find("0 files with unsynced data, 0 bytes unsynced in 0 extents, 1 entries, 6 bytes written back"),
            std::string::npos)
      << disk_.stderr_text();
  ASSERT_TRUE(write_all(fd, "fresh-B;"));
  std::this_thread::sleep_for(100ms);  // over one 75 ms check, far from B's 300 ms
  EXPECT_EQ(read_file(backing("wb")), "old-A;") << "B is too young to be written back";
  disk_.crash();
  ::close(fd);
  ASSERT_TRUE(disk_.start());
  EXPECT_EQ(read_file(mnt("wb")), "old-A;");

  disk_.crash();
  ASSERT_TRUE(disk_.start({"--writeback-ms", "300"}));
  fd = ::open(mnt("wb").c_str(), O_WRONLY | O_APPEND);
  ASSERT_TRUE(write_all(fd, "clean-C;"));
  ::close(fd);
  int status = disk_.stop();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << disk_.stderr_text();
  EXPECT_EQ(read_file(backing("wb")), "old-A;clean-C;");
}

// Four threads append 4 KiB records to a file each and fsync every 8 records, noting the
// length each fsync covered; the daemon is killed while they write. Each file must then
// hold at least what its last successful fsync covered, every byte as written.
TEST_F(Lazydisk, ConcurrentAppendersKeepWhatTheySynced) {
  constexpr int kThreads = 4;
  constexpr std::size_t kRecord = 4096;
  std::atomic<off_t> synced[kThreads] = {};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int fd = ::open(mnt("w" + std::to_string(t)).c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644);
      if (fd < 0) return;
      off_t written = 0;
      for (int i = 0; !stop; ++i) {
        if (!write_all(fd, std::string(kRecord, char('a' + (t * 7 + i) % 26)))) break;
        written += off_t(kRecord);
        if (i % 8 == 7) {
          if (::fsync(fd) != 0) break;
          synced[t] = written;
        }
      }
      ::close(fd);
    });
  }
  std::this_thread::sleep_for(1s);
  disk_.crash();
  stop = true;
  for (auto& th : threads) th.join();
  ASSERT_TRUE(disk_.start());
  for (int t = 0; t < kThreads; ++t) {
    std::string data = read_file(mnt("w" + std::to_string(t)));
    EXPECT_GT(synced[t].load(), 0) << "thread " << t;
    EXPECT_GE(off_t(data.size()), synced[t].load()) << "thread " << t;
    for (std::size_t i = 0; i < data.size(); i += kRecord)
      ASSERT_EQ(data.substr(i, kRecord), std::string(kRecord, char('a' + (t * 7 + int(i / kRecord)) % 26)))
          << "thread " << t << " record " << i / kRecord;
  }
}

}  // namespace
}  // namespace fencecheck::lazydisk
