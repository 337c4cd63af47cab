// Deadline: how long a blocking call may take, owned by its caller — an instant on the
// steady clock, and a cancel check that ends it early (the run's Ctrl-C, the final heal,
// the time limit). A callee that waits gives up once expired(); one that calls further
// down passes the same deadline or a sooner one (within()), never a later one, so a bound
// a caller promises (nemesis/nemesis.h) holds however deep the call goes and on every
// runtime.
//
// A value: cheap to copy. Thread-safe as far as its cancel check is (a CancelCheck must be
// callable from any thread). Nothing here blocks but sleep(), which waits at most what is
// left.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace fencecheck {

// Asked every 50 ms or so by a blocking wait: true means give up now.
using CancelCheck = std::function<bool()>;

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // d from now; cancel (optional) ends it early.
  static Deadline after(std::chrono::milliseconds d, CancelCheck cancel = {});
  // No time limit: only cancel ends it (a setup step bounded elsewhere). Use sparingly.
  static Deadline only_cancel(CancelCheck cancel);

  // The sooner of this deadline and d from now, with the same cancel check.
  Deadline within(std::chrono::milliseconds d) const;
  // This deadline, also cancelled when `also` says so.
  Deadline or_when(CancelCheck also) const;

  Clock::time_point at() const { return at_; }
  // What is left, 0 once passed or cancelled.
  std::chrono::milliseconds left() const;
  bool passed() const { return Clock::now() >= at_; }
  bool cancelled() const { return cancel_ && cancel_(); }
  bool expired() const { return passed() || cancelled(); }
  // The cancel check alone, for a callee that takes a CancelCheck.
  const CancelCheck& cancel() const { return cancel_; }
  // Sleeps d, or less when the deadline comes first (waking every 50 ms for the cancel
  // check). True when it slept all of d, false when it stopped early because it expired.
  bool sleep(std::chrono::milliseconds d) const;
  // "2000 ms" — the budget it had when made, for messages ("no answer within 2000 ms").
  std::string budget_text() const;

 private:
  Deadline(Clock::time_point at, std::chrono::milliseconds budget, CancelCheck cancel)
      : at_(at), budget_(budget), cancel_(std::move(cancel)) {}
  Clock::time_point at_;
  std::chrono::milliseconds budget_;
  CancelCheck cancel_;
};

}  // namespace fencecheck
