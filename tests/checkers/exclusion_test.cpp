#include <gtest/gtest.h>

#include "checkers/safety.h"
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

// A holder told `lost` by its library stops holding then: a later acquire by another is
// fine; one before the notice is a violation that says the library spoke too late, and in a
// history with notices, a holder never told is said to have been left in silence.
TEST(Exclusion, ALostNoticeEndsTheHoldAndViolationsSayWhoWasTold) {
  HistoryBuilder told;
  told.acquire(1, "l0", 0, 1).lost(1, "l0", 10).acquire(2, "l0", 20, 30).release(2, "l0", 40, 41);
  auto r = told.result("exclusion");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;

  HistoryBuilder late;
  late.acquire(1, "l0", 0, 1).acquire(2, "l0", 2, 5).lost(1, "l0", 4100).release(2, "l0", 5000, 5001);
  late.acquire(3, "l1", 6000, 6001).acquire(4, "l1", 6002, 6006).release(4, "l1", 6007, 6008);
  late.release(3, "l1", 6009, 6010);
  auto bad = late.result("exclusion");
  ASSERT_EQ(bad.verdict, Verdict::kInvalid);
  ASSERT_EQ(bad.count, 2u);
  EXPECT_EQ(bad.violations[0]["held"]["ended_by"], "lost");
  EXPECT_EQ(bad.violations[0]["holder_told"], true);
  EXPECT_NE(bad.violations[0]["message"].get<std::string>().find("the library said lost at 4.100 s"), std::string::npos)
      << bad.violations[0]["message"];
  EXPECT_EQ(bad.violations[1]["holder_told"], false);
  EXPECT_NE(bad.violations[1]["message"].get<std::string>().find("the library stayed silent"), std::string::npos)
      << bad.violations[1]["message"];
  // The counts the suite's "said lost" column reads.
  EXPECT_EQ(bad.stats["lost_notices"], 1);
  EXPECT_EQ(bad.stats["violations_told"], 1);

  HistoryBuilder other_key;  // a notice of another key ends nothing here
  other_key.acquire(1, "l0", 0, 1).lost(1, "l9", 2).acquire(2, "l0", 3, 4).release(2, "l0", 10, 11);
  EXPECT_EQ(other_key.result("exclusion").verdict, Verdict::kInvalid);

  HistoryBuilder native;  // no notices at all: messages as before, no holder_told
  native.acquire(1, "l0", 0, 1).acquire(2, "l0", 2, 3).release(2, "l0", 10, 11);
  auto plain = native.result("exclusion");
  ASSERT_EQ(plain.verdict, Verdict::kInvalid);
  EXPECT_FALSE(plain.violations[0].contains("holder_told"));
  EXPECT_FALSE(plain.stats.contains("lost_notices"));
  EXPECT_EQ(plain.violations[0]["message"].get<std::string>().find("library"), std::string::npos);
}

// Notices touch no other checker's rule: tokens and resource judge the same as without them.
TEST(Exclusion, NoticesLeaveTheOtherCheckersAlone) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 5).lost(1, "l0", 2).acquire(2, "l0", 3, 4, 6).release(2, "l0", 5, 6, 6);
  EXPECT_EQ(h.result("tokens").verdict, Verdict::kValid);
  HistoryBuilder down;
  down.acquire(1, "l0", 0, 1, 5).lost(1, "l0", 2).acquire(2, "l0", 3, 4, 4);
  EXPECT_EQ(down.result("tokens").verdict, Verdict::kInvalid) << "a notice does not excuse a token going down";
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

TEST(Exclusion, AcquiresInsideOneHoldAreOneViolation) {
  HistoryBuilder h;  // p1 holds for the whole history; p2..p4 each acquire inside it
  h.acquire(1, "l0", 0, 1);
  for (int p = 2; p <= 4; ++p) h.acquire(p, "l0", p * 10, p * 10 + 1).release(p, "l0", p * 10 + 2, p * 10 + 3);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.count, 1u) << "one hold overlapped";
  EXPECT_EQ(r.stats["acquires_inside"], 3);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0]["acquires_inside"], 3);
  EXPECT_EQ(r.violations[0]["inside"].size(), 3u);
}

TEST(Exclusion, NemesisLinesExtendTheEndOfHistory) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).nemesis("pause", 100);
  auto r = h.check("exclusion").results[0].second;
  EXPECT_EQ(r.verdict, Verdict::kValid);
}

// --- Pruning: the checker forgets holds that can no longer matter (exclusion.cpp). Each
// test below breaks one wrong way of forgetting.

TEST(ExclusionPruning, AClosedHoldStillCatchesAnOpenHoldThatStartedInsideIt) {
  HistoryBuilder h;  // p2 acquires inside p1's hold; p1's hold closes (and is judged) first
  h.acquire(1, "l0", 0, 1).acquire(2, "l0", 2, 5);
  h.release(1, "l0", 10, 11);
  for (int i = 0; i < 20; ++i) h.acquire(3, "l1", 12 + i * 4, 13 + i * 4).release(3, "l1", 14 + i * 4, 15 + i * 4);
  h.release(2, "l0", 100, 101);
  auto r = h.result("exclusion");
  ASSERT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["held"]["process"], 1);
  EXPECT_EQ(r.violations[0]["held"]["end"], 10'000'000);
  EXPECT_EQ(r.violations[0]["acquired"]["process"], 2);
}

// p1 holds l0 and starts a read that hangs; p2 takes l0 and gives it back before the read
// ends. Whether p2's hold overlaps depends on how the read ends, known only later: an ok
// read means p1 still held l0, an info retires p1 as of the read's invoke.
TEST(ExclusionPruning, AHoldIsNotJudgedWhileAnEarlierHoldMayStillEnd) {
  auto run = [](const char* read_outcome) {
    HistoryBuilder h;
    h.acquire(1, "l0", 0, 1).op(1, "invoke", "read", "k", nullptr, 10);
    h.acquire(2, "l0", 20, 30).release(2, "l0", 40, 41);
    h.acquire(3, "l0", 42, 43).release(3, "l0", 44, 45);
    h.op(1, read_outcome, "read", "k", read_outcome == std::string("ok") ? json(1) : json(nullptr), 500);
    if (read_outcome == std::string("ok")) h.release(1, "l0", 600, 601);
    return h.result("exclusion");
  };
  auto ok = run("ok");
  EXPECT_EQ(ok.verdict, Verdict::kInvalid) << ok.summary;
  EXPECT_EQ(ok.count, 1u) << "p1's one hold, overlapped by p2 and p3";
  EXPECT_EQ(ok.stats["acquires_inside"], 2);
  EXPECT_EQ(ok.violations[0]["held"]["end"], 600'000'000);
  auto info = run("info");
  EXPECT_EQ(info.verdict, Verdict::kValid) << info.summary;
}

TEST(ExclusionPruning, ALongHoldIsKeptWhileManyShortOnesComeAndGo) {
  HistoryBuilder h;  // p1 takes l0 at 1 ms and never gives it back
  h.acquire(1, "l0", 0, 1);
  double t = 2;
  for (int i = 0; i < 500; ++i, t += 4) h.acquire(2 + i % 7, "l1", t, t + 1).release(2 + i % 7, "l1", t + 2, t + 3);
  h.acquire(9, "l0", t, t + 1).release(9, "l0", t + 2, t + 3);
  auto r = h.result("exclusion");
  ASSERT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["held"]["process"], 1);
  EXPECT_EQ(r.violations[0]["held"]["start"], 1'000'000);
  EXPECT_EQ(r.violations[0]["held"]["ended_by"], "end-of-history");
  EXPECT_EQ(r.stats["holds"], 502);
  EXPECT_LE(r.stats["holds_kept_peak"].get<int>(), 3) << "the long hold and one short one at a time";
}

TEST(ExclusionPruning, SimultaneousStartsAcrossOtherLinesStillOverlap) {
  HistoryBuilder h;  // p1 and p2 complete acquires at the same instant, other lines between
  h.op(1, "invoke", "acquire", "l0", nullptr, 0).op(2, "invoke", "acquire", "l0", nullptr, 0);
  h.op(1, "ok", "acquire", "l0", {{"token", nullptr}}, 5);
  h.op(3, "invoke", "release", "l0", {{"token", nullptr}}, 5).op(3, "ok", "release", "l0", {{"token", nullptr}}, 5);
  h.op(2, "ok", "acquire", "l0", {{"token", nullptr}}, 5);
  h.release(1, "l0", 6, 7).release(2, "l0", 8, 9);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 2u) << "each of the two holds has the other inside it";
}

TEST(ExclusionPruning, NonOverlappingHoldsKeepStateOfTheProcessesNotOfTheHistory) {
  HistoryBuilder h;  // 4 processes take 2 locks in turn, 2000 holds in all
  double t = 0;
  for (int round = 0; round < 500; ++round) {
    for (int p = 1; p <= 4; ++p, t += 4) h.acquire(p, "l" + std::to_string(p % 2), t, t + 1).release(p, "l" + std::to_string(p % 2), t + 2, t + 3);
  }
  auto r = h.result("exclusion");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.stats["holds"], 2000);
  EXPECT_LE(r.stats["holds_kept_peak"].get<int>(), 4);
}

TEST(ExclusionPruning, ViolationsBeyondTheShownOnesAreCountedAndTheEarliestShown) {
  HistoryBuilder h;  // 30 holds, on two keys in turn, each overlapped by two acquires of others
  for (int i = 0; i < 30; ++i) {
    const std::string key = i % 2 ? "l1" : "l0";
    const double t = 10.0 * i;
    h.acquire(100 + i, key, t, t + 1);
    h.acquire(200 + i, key, t + 2, t + 3).release(200 + i, key, t + 4, t + 4.5);
    h.acquire(300 + i, key, t + 5, t + 6).release(300 + i, key, t + 7, t + 7.5);
    h.release(100 + i, key, t + 8, t + 9);
  }
  auto r = h.result("exclusion");
  EXPECT_EQ(r.count, 30u);
  EXPECT_EQ(r.stats["acquires_inside"], 60);
  EXPECT_EQ(r.count_text, "30 holds overlapped by 60 acquires");
  ASSERT_EQ(r.violations.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(r.violations[i]["held"]["process"], 100 + i);
    EXPECT_EQ(r.violations[i]["acquired"]["process"], 200 + i);
    EXPECT_EQ(r.violations[i]["acquires_inside"], 2);
  }
}

TEST(ExclusionPruning, TimeGoingBackwardsIsRefusedNotJudgedByEitherPruningChecker) {
  // The readers reject such a history (validator); fed directly, the checkers that prune
  // (exclusion and tokens) refuse it too rather than judge with what they forgot.
  for (auto make : {make_exclusion_checker, make_tokens_checker}) {
    auto checker = make(CheckOptions{});
    Event e;
    e.process = 1;
    e.key = "l0";
    e.f = OpFn::kAcquire;
    e.time = 100;
    e.line = 1;
    checker->observe(e);
    e.type = OpType::kOk;
    e.token = 1;
    e.time = 50;
    e.line = 2;
    e.index = 1;
    try {
      checker->observe(e);
      ADD_FAILURE() << "a time going backwards was accepted";
    } catch (const std::invalid_argument& err) {
      EXPECT_NE(std::string(err.what()).find("line 2: time 50 ns is before 100 ns"), std::string::npos) << err.what();
    }
  }
}

}  // namespace
}  // namespace fencecheck::testing
