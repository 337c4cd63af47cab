// libfcclock's promises (nemesis/clock/clock_shim.c), tested by loading the library with
// dlopen and calling its functions directly: CLOCK_REALTIME, gettimeofday and time move by
// the file's offset, which may change while the program runs; every other clock is the
// host's; errors are the kernel's (EINVAL for an unknown clock, EFAULT for NULL), never a
// crash. The library reads the real clocks through the vDSO; that it costs no system call
// is a figure for the notes (26 ns against 1.2 us a call), not a timed test.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/time.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

namespace fencecheck {
namespace {

namespace fs = std::filesystem;

using ClockGettime = int (*)(clockid_t, timespec*);
using Gettimeofday = int (*)(timeval*, void*);
using Time = time_t (*)(time_t*);

constexpr std::int64_t kHour = 3600LL * 1000000000LL;

std::int64_t ns(const timespec& t) { return std::int64_t(t.tv_sec) * 1000000000LL + t.tv_nsec; }

// One library per process (ctest runs each test in its own): the offset file is mapped on
// the first call and read on every call after.
class ClockShim : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = fs::temp_directory_path() / ("fc-clock-shim-" + std::to_string(::getpid()));
    write_offset(kHour + 250);
    ::setenv("FENCECHECK_CLOCK_FILE", file_.c_str(), 1);
    lib_ = ::dlopen(FC_CLOCK_LIB, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << ::dlerror();
    shim_clock_ = reinterpret_cast<ClockGettime>(::dlsym(lib_, "clock_gettime"));
    shim_tod_ = reinterpret_cast<Gettimeofday>(::dlsym(lib_, "gettimeofday"));
    shim_time_ = reinterpret_cast<Time>(::dlsym(lib_, "time"));
    ASSERT_TRUE(shim_clock_ && shim_tod_ && shim_time_);
    ASSERT_NE(reinterpret_cast<void*>(shim_clock_), reinterpret_cast<void*>(&::clock_gettime)) << "the shim's own";
  }
  void TearDown() override {
    if (lib_ != nullptr) ::dlclose(lib_);
    fs::remove(file_);
  }
  // Rewrites the 8 bytes in place: the library keeps its mapping of the same file.
  void write_offset(std::int64_t offset) const {
    std::fstream f(file_, std::ios::in | std::ios::out | std::ios::binary);
    if (!f) f.open(file_, std::ios::out | std::ios::binary);
    f.write(reinterpret_cast<const char*>(&offset), sizeof offset);
  }
  std::int64_t host(clockid_t clock) const {
    timespec t{};
    ::clock_gettime(clock, &t);
    return ns(t);
  }
  std::int64_t shimmed(clockid_t clock) const {
    timespec t{};
    EXPECT_EQ(shim_clock_(clock, &t), 0);
    return ns(t);
  }

  fs::path file_;
  void* lib_ = nullptr;
  ClockGettime shim_clock_ = nullptr;
  Gettimeofday shim_tod_ = nullptr;
  Time shim_time_ = nullptr;
};

constexpr std::int64_t kSlack = 200'000'000;  // two reads of a clock, however loaded the machine

TEST_F(ClockShim, TheWallClockMovesByTheOffsetAndFollowsItsChanges) {
  EXPECT_NEAR(double(shimmed(CLOCK_REALTIME) - host(CLOCK_REALTIME)), double(kHour + 250), double(kSlack));
  EXPECT_NEAR(double(shimmed(CLOCK_REALTIME_COARSE) - host(CLOCK_REALTIME_COARSE)), double(kHour), double(kSlack));
  write_offset(-2 * kHour);
  EXPECT_NEAR(double(shimmed(CLOCK_REALTIME) - host(CLOCK_REALTIME)), double(-2 * kHour), double(kSlack));
  timeval tv{};
  ASSERT_EQ(shim_tod_(&tv, nullptr), 0);
  EXPECT_NEAR(double(tv.tv_sec - std::time(nullptr)), -7200.0, 1.0);
  time_t out = 0;
  EXPECT_EQ(shim_time_(&out), out);
  EXPECT_NEAR(double(out - std::time(nullptr)), -7200.0, 1.0);
}

TEST_F(ClockShim, EveryOtherClockIsTheHosts) {
  for (clockid_t c : {CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME, CLOCK_MONOTONIC_COARSE}) {
    const std::int64_t before = host(c);
    const std::int64_t shim = shimmed(c);
    const std::int64_t after = host(c);
    EXPECT_LE(before - 10'000'000, shim) << "clock " << c;  // COARSE ticks every few ms
    EXPECT_LE(shim, after + 10'000'000) << "clock " << c;
  }
}

TEST_F(ClockShim, ErrorsAreTheKernelsNeverACrash) {
  timespec t{};
  errno = 0;
  EXPECT_EQ(shim_clock_(clockid_t(12345), &t), -1);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  volatile ClockGettime fn = shim_clock_;  // NULL through a pointer glibc declares nonnull
  EXPECT_EQ(fn(CLOCK_MONOTONIC, nullptr), -1);
  EXPECT_EQ(errno, EFAULT);
  errno = 0;
  EXPECT_EQ(fn(CLOCK_REALTIME, nullptr), -1);
  EXPECT_EQ(errno, EFAULT);
  volatile Gettimeofday tod = shim_tod_;
  EXPECT_EQ(tod(nullptr, nullptr), 0);
  EXPECT_GT(shim_time_(nullptr), 0);
}

TEST_F(ClockShim, AMissingFileIsAnOffsetOfZero) {
  // This process's library has mapped the file already; a second process must start anew.
  const std::string probe = "FENCECHECK_CLOCK_FILE=/no/such/file LD_PRELOAD=" + std::string(FC_CLOCK_LIB) +
                            " date +%s > " + file_.string() + ".out";
  ASSERT_EQ(std::system(probe.c_str()), 0);
  std::ifstream in(file_.string() + ".out");
  long long seconds = 0;
  in >> seconds;
  fs::remove(file_.string() + ".out");
  EXPECT_NEAR(double(seconds), double(std::time(nullptr)), 2.0);
}

}  // namespace
}  // namespace fencecheck
