// TimeSource: where the nemesis and its schedule read the time, so that their unit tests
// drive a ManualTime instead of sleeping. Instants are steady (monotonic): wall-clock jumps
// never move a fault's end.
//
// SteadyTime reads std::chrono::steady_clock. ManualTime starts at an arbitrary instant and
// moves only when a test calls advance(). Both are thread-safe.
#pragma once

#include <atomic>
#include <chrono>

namespace fencecheck {

class TimeSource {
 public:
  using Instant = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;
  virtual ~TimeSource() = default;
  virtual Instant now() const = 0;
};

class SteadyTime final : public TimeSource {
 public:
  Instant now() const override { return std::chrono::steady_clock::now(); }
};

class ManualTime final : public TimeSource {
 public:
  Instant now() const override { return Instant(Instant::duration(ticks_.load())); }
  void advance(std::chrono::nanoseconds d) { ticks_ += d.count(); }

 private:
  std::atomic<Instant::rep> ticks_{1'000'000'000};
};

}  // namespace fencecheck
