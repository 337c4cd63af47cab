// The report's stuck-lock rule (report/stuck_locks.h): refused acquires of a key nobody
// held, on hand-made timelines with known answers — and none where a holder explains them.
#include <gtest/gtest.h>

#include "report/stuck_locks.h"
#include "tests/report/nanos.h"

namespace fencecheck::report {
namespace {

TimelineOp refused(const std::string& key, Nanos invoke, Nanos complete) {
  TimelineOp op;
  op.f = OpFn::kAcquire;
  op.outcome = OpType::kFail;
  op.key = key;
  op.invoke = invoke;
  op.complete = complete;
  return op;
}

Hold hold(const std::string& key, Nanos start, Nanos end) {
  Hold h;
  h.key = key;
  h.start = start;
  h.end = end;
  return h;
}

TEST(StuckLocks, RefusedAcquiresWhileNobodyHoldsTheKeyAreAStretch) {
  Timeline t;
  t.holds = {hold("k", 0, 1 * kSec), hold("k", 9 * kSec, 10 * kSec)};
  // Refused between the holds, 2 s to 8 s: six of them.
  for (int i = 0; i < 6; ++i) t.ops.push_back(refused("k", (2 + i) * kSec, (2 + i) * kSec + 500 * kMs));
  std::vector<StuckLock> s = stuck_locks(t);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].key, "k");
  EXPECT_EQ(s[0].from, 2 * kSec);
  EXPECT_EQ(s[0].to, 7500 * kMs);
  EXPECT_EQ(s[0].refused, 6u);
}

TEST(StuckLocks, AcquiresRefusedWhileSomeoneHoldsTheKeyAreNot) {
  Timeline t;
  t.holds = {hold("k", 0, 10 * kSec)};
  for (int i = 0; i < 6; ++i) t.ops.push_back(refused("k", (2 + i) * kSec, (2 + i) * kSec + 500 * kMs));
  EXPECT_TRUE(stuck_locks(t).empty());
}

TEST(StuckLocks, AHoldBetweenRefusalsSplitsTheStretchAndTheLongestIsKept) {
  Timeline t;
  t.holds = {hold("k", 5 * kSec, 6 * kSec)};
  t.ops = {refused("k", 1 * kSec, 1100 * kMs), refused("k", 2 * kSec, 2100 * kMs),  // 1.1 s, 2 refused
           refused("k", 7 * kSec, 7100 * kMs), refused("k", 8 * kSec, 8100 * kMs),
           refused("k", 12 * kSec, 12100 * kMs)};  // 5.1 s, 3 refused
  std::vector<StuckLock> s = stuck_locks(t);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].from, 7 * kSec);
  EXPECT_EQ(s[0].to, 12100 * kMs);
  EXPECT_EQ(s[0].refused, 3u);
}

TEST(StuckLocks, KeysAreApartAndOneRefusalIsNoStretch) {
  Timeline t;
  t.holds = {hold("a", 0, 20 * kSec)};
  t.ops = {refused("a", 1 * kSec, 2 * kSec), refused("a", 3 * kSec, 4 * kSec),  // a is held: not stuck
           refused("b", 1 * kSec, 2 * kSec), refused("b", 3 * kSec, 9 * kSec),  // b: 8 s, 2 refused
           refused("c", 1 * kSec, 2 * kSec)};                                   // c: a single refusal
  std::vector<StuckLock> s = stuck_locks(t);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].key, "b");
  EXPECT_EQ(s[0].to - s[0].from, 8 * kSec);
}

}  // namespace
}  // namespace fencecheck::report
