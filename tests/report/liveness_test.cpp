// Liveness figures (report/liveness.h): ok-rates during and after each fault window and
// recovery time per op kind, on hand-made completions with known answers.
#include <gtest/gtest.h>

#include "report/liveness.h"
#include "tests/report/nanos.h"

namespace fencecheck::report {
namespace {

// n ok completions of `f`, evenly from `from` (inclusive) to `to` (exclusive).
void add_oks(std::vector<OkCompletion>& oks, OpFn f, Nanos from, Nanos to, int n) {
  for (int i = 0; i < n; ++i) oks.push_back({from + (to - from) * i / n, f});
}

void sort_by_time(std::vector<OkCompletion>& oks) {
  std::stable_sort(oks.begin(), oks.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
}

TEST(Liveness, RatesDuringTheFaultAndTheSameLengthAfterItsHeal) {
  std::vector<OkCompletion> oks;
  add_oks(oks, OpFn::kAcquire, 0, 1 * kSec, 100);        // before: 100/s
  add_oks(oks, OpFn::kAcquire, 1 * kSec, 3 * kSec, 10);  // during 2 s: 5/s
  add_oks(oks, OpFn::kAcquire, 3 * kSec, 5 * kSec, 60);  // after 2 s: 30/s
  add_oks(oks, OpFn::kAcquire, 5 * kSec, 6 * kSec, 100);
  Liveness l = compute_liveness(oks, {{"pause-holder", 1 * kSec, 3 * kSec, false}}, 0, 6 * kSec);
  ASSERT_EQ(l.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(*l.windows[0].during_ok_per_s, 5.0);
  EXPECT_DOUBLE_EQ(*l.windows[0].after_ok_per_s, 30.0);
  EXPECT_EQ(l.windows[0].after_length, 2 * kSec);
  EXPECT_NEAR(*l.overall_ok_per_s, 270.0 / 6.0, 1e-9);
}

TEST(Liveness, TheAfterIntervalIsCutAtTheEndOfTheHistory) {
  std::vector<OkCompletion> oks;
  add_oks(oks, OpFn::kRead, 3 * kSec, 3500 * kMs, 10);
  Liveness l = compute_liveness(oks, {{"partition-halves", 1 * kSec, 3 * kSec, false}}, 0, 3500 * kMs);
  EXPECT_EQ(l.windows[0].after_length, 500 * kMs);
  EXPECT_DOUBLE_EQ(*l.windows[0].after_ok_per_s, 20.0);  // 10 in half a second
  EXPECT_DOUBLE_EQ(*l.windows[0].during_ok_per_s, 0.0);
}

TEST(Liveness, RecoveryIsTheFirstOkOfEachKindAtOrAfterTheHeal) {
  std::vector<OkCompletion> oks = {{500 * kMs, OpFn::kAcquire}, {2100 * kMs, OpFn::kRead},
                                   {2400 * kMs, OpFn::kAcquire}, {2500 * kMs, OpFn::kRead}};
  // A write completed before the heal only: it never recovers.
  oks.insert(oks.begin(), OkCompletion{100 * kMs, OpFn::kWrite});
  Liveness l = compute_liveness(oks, {{"pause-holder", 1 * kSec, 2 * kSec, false}}, 0, 3 * kSec);
  const WindowLiveness& w = l.windows[0];
  EXPECT_EQ(l.kinds, (std::vector<OpFn>{OpFn::kAcquire, OpFn::kRead, OpFn::kWrite}));
  EXPECT_EQ(w.recovery.at(OpFn::kAcquire), 400 * kMs);
  EXPECT_EQ(w.recovery.at(OpFn::kRead), 100 * kMs);
  EXPECT_FALSE(w.recovery.at(OpFn::kWrite).has_value());
  EXPECT_EQ(w.recovery_any, 100 * kMs);
}

TEST(Liveness, AnOkExactlyAtTheHealCountsAfterItWithZeroRecovery) {
  std::vector<OkCompletion> oks = {{2 * kSec, OpFn::kAcquire}};
  Liveness l = compute_liveness(oks, {{"kill-server", 1 * kSec, 2 * kSec, false}}, 0, 4 * kSec);
  EXPECT_DOUBLE_EQ(*l.windows[0].during_ok_per_s, 0.0);
  EXPECT_DOUBLE_EQ(*l.windows[0].after_ok_per_s, 1.0);
  EXPECT_EQ(l.windows[0].recovery.at(OpFn::kAcquire), 0);
}

TEST(Liveness, AFaultOpenAtTheEndHasNoAfterAndNoRecovery) {
  std::vector<OkCompletion> oks;
  add_oks(oks, OpFn::kAcquire, 0, 4 * kSec, 40);
  Liveness l = compute_liveness(oks, {{"clock-bump", 2 * kSec, 4 * kSec, true}}, 0, 4 * kSec);
  EXPECT_DOUBLE_EQ(*l.windows[0].during_ok_per_s, 10.0);
  EXPECT_FALSE(l.windows[0].after_ok_per_s.has_value());
  EXPECT_TRUE(l.windows[0].recovery.empty());
  EXPECT_FALSE(l.windows[0].recovery_any.has_value());
}

TEST(Liveness, OverlappingWindowsAreMeasuredIndependently) {
  std::vector<OkCompletion> oks;
  add_oks(oks, OpFn::kAcquire, 0, 10 * kSec, 100);  // 10/s throughout
  add_oks(oks, OpFn::kRelease, 0, 10 * kSec, 100);
  sort_by_time(oks);
  Liveness l = compute_liveness(oks, {{"pause-holder", 1 * kSec, 5 * kSec, false}, {"partition-one", 2 * kSec, 3 * kSec, false}},
                                0, 10 * kSec);
  ASSERT_EQ(l.windows.size(), 2u);
  EXPECT_DOUBLE_EQ(*l.windows[0].during_ok_per_s, 20.0);
  EXPECT_DOUBLE_EQ(*l.windows[1].during_ok_per_s, 20.0);
  EXPECT_EQ(l.windows[1].span.fault, "partition-one");
}

TEST(Liveness, ZeroLengthWindowsAndEmptyHistoriesHaveNoRates) {
  Liveness l = compute_liveness({}, {{"pause", 1 * kSec, 1 * kSec, false}}, 0, 0);
  EXPECT_FALSE(l.overall_ok_per_s.has_value());
  EXPECT_FALSE(l.windows[0].during_ok_per_s.has_value());
  EXPECT_FALSE(l.windows[0].after_ok_per_s.has_value());
  EXPECT_TRUE(l.kinds.empty());
}

}  // namespace
}  // namespace fencecheck::report
