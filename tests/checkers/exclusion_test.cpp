#include <gtest/gtest.h>

#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

TEST(Exclusion, SequentialHoldsAreValid) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).release(1, "l0", 5, 6).acquire(2, "l0", 6, 7).release(2, "l0", 9, 10);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(r.stats["holds"], 2);
}

TEST(Exclusion, TouchingHoldsDoNotOverlap) {
  HistoryBuilder h;  // p1's release is invoked at 5, exactly when p2's acquire completes
  h.acquire(1, "l0", 0, 1).op(2, "invoke", "acquire", "l0", nullptr, 2);
  h.op(1, "invoke", "release", "l0", {{"token", nullptr}}, 5);
  h.op(2, "ok", "acquire", "l0", {{"token", nullptr}}, 5);
  h.op(1, "ok", "release", "l0", {{"token", nullptr}}, 6);
  EXPECT_EQ(h.result("exclusion").verdict, Verdict::kValid);
}

TEST(Exclusion, OverlappingHoldsAreAViolationWithBothOps) {
  HistoryBuilder h;
  h.acquire(3, "l0", 1000, 1204).op(5, "invoke", "acquire", "l0", nullptr, 2000);
  h.op(5, "ok", "acquire", "l0", {{"token", nullptr}}, 2950);
  h.release(3, "l0", 3880, 3900).release(5, "l0", 4000, 4100);
  auto r = h.result("exclusion");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.summary,
            "process 3 (c3) held l0 from 1.204 s to 3.880 s while process 5 (c5) acquired it at 2.950 s");
  const auto& v = r.violations.at(0);
  EXPECT_EQ(v["held"]["acquire_index"], 1);
  EXPECT_EQ(v["held"]["end_index"], 4);
  EXPECT_EQ(v["acquired"]["process"], 5);
  EXPECT_EQ(v["key"], "l0");
  EXPECT_EQ(r.first_violation_at, 2'950'000'000) << "when the second holder acquired (the builder counts ms)";
  EXPECT_DOUBLE_EQ(r.to_json()["first_violation_s"].get<double>(), 2.95);
}

TEST(Exclusion, NoViolationNoFirstViolationTime) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).release(1, "l0", 2, 3);
  auto r = h.result("exclusion");
  EXPECT_FALSE(r.first_violation_at.has_value());
  EXPECT_FALSE(r.to_json().contains("first_violation_s"));
}

TEST(Exclusion, SkippedWithoutHolds) {
  HistoryBuilder h;
  h.op(1, "invoke", "acquire", "l0", nullptr, 0).op(1, "fail", "acquire", "l0", nullptr, 1);
  h.read(2, "k0", json::array(), 2, 3);
  EXPECT_EQ(h.result("exclusion").verdict, Verdict::kSkipped);
}

TEST(Exclusion, DifferentKeysNeverConflict) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).acquire(2, "l1", 1, 2).release(1, "l0", 5, 6).release(2, "l1", 7, 8);
  EXPECT_EQ(h.result("exclusion").verdict, Verdict::kValid);
}

TEST(Exclusion, HoldRunsToTheEndOfTheHistory) {
  HistoryBuilder h;  // p1 never releases: its hold covers p2's later hold
  h.acquire(1, "l0", 0, 1).acquire(2, "l0", 50, 60).release(2, "l0", 70, 80);
  auto r = h.result("exclusion");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.violations[0]["held"]["ended_by"], "end-of-history");
  EXPECT_EQ(r.violations[0]["held"]["end"], 80'000'000);
  EXPECT_NE(r.summary.find("until the end of the history"), std::string::npos);
}

TEST(Exclusion, HoldEndedByInfoRetirement) {
  HistoryBuilder h;  // p1 holds, its next op times out: the hold ends at that op's invoke
  h.acquire(1, "l0", 0, 1).op(1, "invoke", "read", "k", nullptr, 10);
  h.acquire(2, "l0", 20, 30).release(2, "l0", 40, 41);
  h.op(1, "info", "read", "k", nullptr, 500);
  auto r = h.result("exclusion");
  ASSERT_EQ(r.verdict, Verdict::kValid) << r.summary;

  HistoryBuilder late;  // the same, but p2 acquires before p1's op was invoked
  late.acquire(1, "l0", 0, 1).acquire(2, "l0", 2, 5);
  late.op(1, "invoke", "read", "k", nullptr, 10).op(1, "info", "read", "k", nullptr, 500);
  late.release(2, "l0", 600, 601);
  auto bad = late.result("exclusion");
  ASSERT_EQ(bad.verdict, Verdict::kInvalid);
  EXPECT_EQ(bad.violations[0]["held"]["ended_by"], "retired");
  EXPECT_EQ(bad.violations[0]["held"]["end"], 10'000'000);
}

TEST(Exclusion, FailedAndUnknownAcquiresMakeNoHold) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);
  h.op(2, "invoke", "acquire", "l0", nullptr, 2).op(2, "fail", "acquire", "l0", nullptr, 3);
  h.op(3, "invoke", "acquire", "l0", nullptr, 4).op(3, "info", "acquire", "l0", nullptr, 5);
  h.release(1, "l0", 10, 11);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.stats["holds"], 1);
}

TEST(Exclusion, SameProcessAcquiringTwiceIsNotAViolation) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).acquire(1, "l0", 2, 3).release(1, "l0", 5, 6);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.verdict, Verdict::kValid);
  EXPECT_EQ(r.stats["holds"], 2);
  // …but both of its holds end at that release: a third process inside them is caught.
  HistoryBuilder h2;
  h2.acquire(1, "l0", 0, 1).acquire(1, "l0", 2, 3).acquire(2, "l0", 3, 4);
  h2.release(1, "l0", 5, 6).release(2, "l0", 7, 8);
  auto r2 = h2.result("exclusion");
  EXPECT_EQ(r2.verdict, Verdict::kInvalid);
  EXPECT_EQ(r2.count, 1u);
}

TEST(Exclusion, ReleaseEndsTheHoldEvenIfItNeverCompletes) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).op(1, "invoke", "release", "l0", {{"token", nullptr}}, 5);
  h.acquire(2, "l0", 6, 7);
  EXPECT_EQ(h.result("exclusion").verdict, Verdict::kValid);
}

TEST(Exclusion, SimultaneousStartsOverlapOnlyWhenBothHoldsLast) {
  auto both_ok = [](HistoryBuilder& h) {
    h.op(1, "invoke", "acquire", "l0", nullptr, 0).op(2, "invoke", "acquire", "l0", nullptr, 0);
    h.op(1, "ok", "acquire", "l0", {{"token", nullptr}}, 5).op(2, "ok", "acquire", "l0", {{"token", nullptr}}, 5);
  };
  HistoryBuilder both;
  both_ok(both);
  both.release(1, "l0", 6, 7).release(2, "l0", 8, 9);
  EXPECT_EQ(both.result("exclusion").verdict, Verdict::kInvalid);
  HistoryBuilder empty;  // p2's hold is empty (released the instant it began): no overlap
  both_ok(empty);
  empty.op(2, "invoke", "release", "l0", {{"token", nullptr}}, 5);
  empty.op(2, "ok", "release", "l0", {{"token", nullptr}}, 5);
  empty.release(1, "l0", 6, 7);
  EXPECT_EQ(empty.result("exclusion").verdict, Verdict::kValid);
}

TEST(Exclusion, CountsEveryOverlappedHold) {
  HistoryBuilder h;  // p1 holds for the whole history; p2..p4 each acquire inside it
  h.acquire(1, "l0", 0, 1);
  for (int p = 2; p <= 4; ++p) h.acquire(p, "l0", p * 10, p * 10 + 1).release(p, "l0", p * 10 + 2, p * 10 + 3);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(r.violations.size(), 3u);
}

TEST(Exclusion, NemesisLinesExtendTheEndOfHistory) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).nemesis("pause", 100);
  auto r = h.check("exclusion").results[0].second;
  EXPECT_EQ(r.verdict, Verdict::kValid);
}

}  // namespace
}  // namespace fencecheck::testing
