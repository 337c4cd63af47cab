// exclusion's violations grouped by the earlier hold (docs/checkers.md): one violation per
// hold that acquires of other processes began inside, with how many did and the first few.
// `count` is the number of such holds, the stat `acquires_inside` the acquires inside them.
#include <gtest/gtest.h>

#include "checkers/safety.h"
#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

// p `holder` holds `key` from t+1 to t+gap*(n+1) (the invoke of its release); processes
// first, first+1, … each take `key` inside it, one every `gap` ms, for gap/2 ms.
void overlapped_hold(HistoryBuilder& h, std::int64_t holder, const std::string& key, double t, int n,
                     std::int64_t first, double gap = 10) {
  h.acquire(holder, key, t, t + 1);
  for (int i = 0; i < n; ++i) {
    const double at = t + gap * (i + 1);
    h.acquire(first + i, key, at - 1, at).release(first + i, key, at + gap / 2, at + gap / 2 + 0.5);
  }
  h.release(holder, key, t + gap * (n + 1), t + gap * (n + 1) + 1);
}

TEST(ExclusionGroups, OneLongHoldWithFiveAcquiresInsideIsOneViolation) {
  HistoryBuilder h;
  overlapped_hold(h, 1, "l0", 0, 5, 2);  // p1 holds l0 from 1 to 60 ms; p2..p6 acquire at 10, 20, … 50
  auto r = h.result("exclusion");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.stats["acquires_inside"], 5);
  EXPECT_EQ(r.count_text, "1 hold overlapped by 5 acquires");
  ASSERT_EQ(r.violations.size(), 1u);
  const json& v = r.violations[0];
  EXPECT_EQ(v["key"], "l0");
  EXPECT_EQ(v["held"]["process"], 1);
  EXPECT_EQ(v["held"]["node"], "c1");
  EXPECT_EQ(v["held"]["start"], 1'000'000);
  EXPECT_EQ(v["held"]["end"], 60'000'000);
  EXPECT_EQ(v["held"]["ended_by"], "release");
  EXPECT_EQ(v["acquires_inside"], 5);
  EXPECT_EQ(v["acquired"]["process"], 2) << "the first acquire inside, as before grouping";
  ASSERT_EQ(v["inside"].size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(v["inside"][i]["process"], 2 + i);
    EXPECT_EQ(v["inside"][i]["start"], (10 + 10 * i) * 1'000'000);
  }
  EXPECT_EQ(r.summary,
            "process 1 (c1) held l0 from 0.001 s to 0.060 s while others acquired it 5 times, first process 2 (c2) "
            "at 0.010 s");
  EXPECT_EQ(v["message"], r.summary);
  EXPECT_EQ(r.first_violation_at, 10'000'000) << "when the first second holder acquired";
  auto j = r.to_json();
  EXPECT_EQ(j["count"], 1);
  EXPECT_EQ(j["shown"], 1);
  EXPECT_EQ(j["acquires_inside"], 5);
  EXPECT_EQ(j["count_text"], "1 hold overlapped by 5 acquires");
  EXPECT_NE(h.check("exclusion").summary().find("exclusion     invalid  1 hold overlapped by 5 acquires: process 1 (c1) "
                                                "held l0 from 0.001 s to 0.060 s while others acquired it 5 times"),
            std::string::npos)
      << h.check("exclusion").summary();
}

TEST(ExclusionGroups, AGroupListsItsFirstFiveAcquiresAndCountsTheRest) {
  HistoryBuilder h;
  overlapped_hold(h, 1, "l0", 0, 12, 2);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.count, 1u);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0]["acquires_inside"], 12);
  ASSERT_EQ(r.violations[0]["inside"].size(), 5u);
  EXPECT_EQ(r.violations[0]["inside"][4]["process"], 6);
}

TEST(ExclusionGroups, TwoPausedHoldsEachOverlappedByThreeAreTwoViolations) {
  HistoryBuilder h;
  overlapped_hold(h, 1, "l0", 0, 3, 2);    // p1 from 1 to 40 ms; p2, p3, p4 inside
  overlapped_hold(h, 5, "l0", 100, 3, 6);  // p5 from 101 to 140 ms; p6, p7, p8 inside
  auto r = h.result("exclusion");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(r.stats["acquires_inside"], 6);
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(r.violations[0]["held"]["process"], 1);
  EXPECT_EQ(r.violations[0]["acquires_inside"], 3);
  EXPECT_EQ(r.violations[1]["held"]["process"], 5);
  EXPECT_EQ(r.violations[1]["acquires_inside"], 3);
  EXPECT_EQ(r.violations[1]["acquired"]["process"], 6);
  EXPECT_EQ(r.first_violation_at, 10'000'000);
  EXPECT_NE(h.check("exclusion").summary().find("2 holds overlapped by 6 acquires, first: process 1 (c1) held l0"),
            std::string::npos)
      << h.check("exclusion").summary();
}

TEST(ExclusionGroups, OverlappingGroupsOnTwoKeysAreCountedApart) {
  HistoryBuilder h;  // p1 holds l0 and l1 from 1 ms to 100 ms; others take each inside
  h.acquire(1, "l0", 0, 1).acquire(1, "l1", 1, 2);
  h.acquire(2, "l0", 9, 10).release(2, "l0", 11, 12);
  h.acquire(3, "l1", 13, 14).release(3, "l1", 15, 16);
  h.acquire(4, "l0", 19, 20).release(4, "l0", 21, 22);
  h.acquire(5, "l1", 23, 24).release(5, "l1", 25, 26);
  h.acquire(6, "l1", 29, 30).release(6, "l1", 31, 32);
  h.release(1, "l0", 100, 101).release(1, "l1", 102, 103);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.count, 2u) << "one overlapped hold per key, though one process held both";
  EXPECT_EQ(r.stats["acquires_inside"], 5);
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(r.violations[0]["key"], "l0");
  EXPECT_EQ(r.violations[0]["acquires_inside"], 2);
  EXPECT_EQ(r.violations[1]["key"], "l1");
  EXPECT_EQ(r.violations[1]["acquires_inside"], 3);
  EXPECT_EQ(r.violations[1]["inside"][2]["process"], 6);
}

TEST(ExclusionGroups, AValidHistoryHasNoGroups) {
  HistoryBuilder h;
  for (int i = 0; i < 5; ++i) h.acquire(1 + i % 3, "l0", 10 * i, 10 * i + 1).release(1 + i % 3, "l0", 10 * i + 5, 10 * i + 6);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(r.stats["acquires_inside"], 0);
  EXPECT_TRUE(r.count_text.empty());
  EXPECT_FALSE(r.to_json().contains("count_text"));
  EXPECT_TRUE(r.violations.empty());
}

// An acquire inside several holds of others is counted once, in the one that ends last: a
// second holder that is itself paused carries the acquires after it into its own group.
TEST(ExclusionGroups, AnAcquireCountsInTheLatestEndingHoldItBeganInside) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);                              // p1: 1 to 50 ms
  h.acquire(2, "l0", 9, 10);                             // p2: 10 to 80 ms, inside p1's
  h.acquire(3, "l0", 19, 20).release(3, "l0", 25, 26);   // inside both: p2's ends later
  h.release(1, "l0", 50, 51);
  h.acquire(4, "l0", 59, 60).release(4, "l0", 65, 66);   // inside p2's only
  h.release(2, "l0", 80, 81);
  auto r = h.result("exclusion");
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(r.stats["acquires_inside"], 3);
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(r.violations[0]["held"]["process"], 1);
  EXPECT_EQ(r.violations[0]["acquires_inside"], 1);
  EXPECT_EQ(r.violations[0]["acquired"]["process"], 2);
  EXPECT_EQ(r.violations[1]["held"]["process"], 2);
  EXPECT_EQ(r.violations[1]["acquires_inside"], 2);
  EXPECT_EQ(r.violations[1]["inside"][0]["process"], 3);
  EXPECT_EQ(r.violations[1]["inside"][1]["process"], 4);
}

// violations_told counts overlapped holds whose holder the library told, not acquires.
TEST(ExclusionGroups, ViolationsToldCountsHoldsWhoseHolderWasTold) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);
  h.acquire(2, "l0", 9, 10).release(2, "l0", 11, 12);
  h.acquire(3, "l0", 19, 20).release(3, "l0", 21, 22);
  h.lost(1, "l0", 30);                                   // told, late: p2 and p3 were inside
  h.acquire(4, "l1", 40, 41).acquire(5, "l1", 42, 43).release(5, "l1", 44, 45);
  h.release(4, "l1", 50, 51);                            // never told
  auto r = h.result("exclusion");
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(r.stats["acquires_inside"], 3);
  EXPECT_EQ(r.stats["lost_notices"], 1);
  EXPECT_EQ(r.stats["violations_told"], 1);
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(r.violations[0]["holder_told"], true);
  EXPECT_EQ(r.violations[0]["acquires_inside"], 2);
  EXPECT_NE(r.violations[0]["message"].get<std::string>().find(
                "while others acquired it 2 times, first process 2 (c2) at 0.010 s; the library said lost at 0.030 s"),
            std::string::npos)
      << r.violations[0]["message"];
  EXPECT_EQ(r.violations[1]["holder_told"], false);
}

// What is kept stays bounded by max_violations groups of a few acquires each, however many
// holds are overlapped and however many acquires are inside each.
TEST(ExclusionGroups, ManyGroupsOfManyAcquiresKeepOnlyTheFirstFew) {
  HistoryBuilder h;
  const int groups = 300, each = 12;
  for (int g = 0; g < groups; ++g) overlapped_hold(h, 1000 + g % 5, "l0", g * 200.0, each, 2000 + g * each);
  CheckRequest req;
  req.history = h.history_path();
  req.checkers = {"exclusion"};
  req.options.max_violations = 4;
  CheckReport report = run_checks(req);
  const CheckResult& r = report.results.at(0).second;
  EXPECT_EQ(r.count, static_cast<std::uint64_t>(groups));
  EXPECT_EQ(r.stats["acquires_inside"], groups * each);
  EXPECT_EQ(r.stats["holds"], groups * (each + 1));
  EXPECT_LE(r.stats["holds_kept_peak"].get<int>(), each + 2) << "one group's holds at a time";
  ASSERT_EQ(r.violations.size(), 4u);
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(r.violations[g]["held"]["process"], 1000 + g % 5);
    EXPECT_EQ(r.violations[g]["acquires_inside"], each);
    EXPECT_EQ(r.violations[g]["inside"].size(), 5u);
  }
  EXPECT_NE(report.summary().find("300 holds overlapped by 3600 acquires (showing 4 of 300), first: "),
            std::string::npos)
      << report.summary();
}

}  // namespace
}  // namespace fencecheck::testing
