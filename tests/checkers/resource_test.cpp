#include <gtest/gtest.h>

#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

TEST(Resource, SkippedWithNothingToJudge) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).release(1, "l0", 2, 3);
  EXPECT_EQ(h.result("resource").verdict, Verdict::kSkipped);
}

TEST(Resource, IncreasingAndEqualTokensAreFine) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);
  h.resource("k0", "write", 1, true).resource("k0", "write", 1, true).resource("k0", "write", 2, true);
  h.resource("k0", "read", nullptr, true).resource("k1", "write", 1, true);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
}

TEST(Resource, StaleAcceptedWriteIsAViolation) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);
  h.resource("k0", "write", 34, true, json::array({1}), "c2");
  h.resource("k0", "write", 33, true, json::array({2}), "c1");
  auto r = h.result("resource");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.violations[0]["kind"], "stale-access");
  EXPECT_EQ(r.violations[0]["token"], 33);
  EXPECT_EQ(r.violations[0]["highest_token"], 34);
  EXPECT_EQ(r.first_violation_at, 1000) << "the time of the stale entry";
  EXPECT_EQ(r.violations[0]["seq"], 1);
  EXPECT_NE(r.summary.find("with token 33 from c1"), std::string::npos) << r.summary;
}

TEST(Resource, RejectedEntriesNeverRaiseTheHighestToken) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);
  h.resource("k0", "write", 5, true).resource("k0", "write", 99, false).resource("k0", "write", 6, true);
  EXPECT_EQ(h.result("resource").verdict, Verdict::kValid);
  HistoryBuilder stale_rejected;  // a refused stale write is the fence working, not a violation
  stale_rejected.acquire(1, "l0", 0, 1);
  stale_rejected.resource("k0", "write", 5, true).resource("k0", "write", 4, false);
  EXPECT_EQ(stale_rejected.result("resource").verdict, Verdict::kValid);
}

TEST(Resource, StaleAcceptedReadIsAViolation) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);
  h.resource("k0", "write", 5, true).resource("k0", "read", 4, true);
  EXPECT_EQ(h.result("resource").verdict, Verdict::kInvalid);
}

TEST(Resource, EveryOkWriteInTheFinalReadIsValid) {
  HistoryBuilder h;
  h.write(1, "k0", {1}, "ok", 0, 1).write(2, "k0", {1, 2}, "ok", 2, 3);
  h.read(3, "k0", {1, 2}, 10, 11);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.stats["writes_judged"], 2);
}

TEST(Resource, LostUpdateIsAViolation) {
  HistoryBuilder h;  // two writers read [] and both write; the second overwrites the first
  h.write(1, "k0", {"a"}, "ok", 0, 1).write(2, "k0", {"b"}, "ok", 2, 3);
  h.read(3, "k0", {"b"}, 10, 11);
  auto r = h.result("resource");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["kind"], "lost-update");
  EXPECT_EQ(r.violations[0]["element"], "a");
  EXPECT_EQ(r.violations[0]["write"]["process"], 1);
}

TEST(Resource, FinalReadIsTheLastOkRead) {
  HistoryBuilder h;  // an early read contains the element, the final one lost it
  h.write(1, "k0", {1}, "ok", 0, 1).read(2, "k0", {1}, 2, 3).write(3, "k0", {2}, "ok", 4, 5);
  h.read(2, "k0", {2}, 6, 7);
  EXPECT_EQ(h.result("resource").verdict, Verdict::kInvalid);
}

TEST(Resource, FailedWriteVisibleIsAViolationInfoWriteIsNot) {
  HistoryBuilder h;
  h.write(1, "k0", {1}, "fail", 0, 1).write(2, "k0", {2}, "info", 2, 3);
  h.read(3, "k0", {2}, 10, 11);
  EXPECT_EQ(h.result("resource").verdict, Verdict::kValid);
  HistoryBuilder bad;
  bad.write(1, "k0", {1}, "fail", 0, 1).read(3, "k0", {1}, 10, 11);
  auto r = bad.result("resource");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.violations[0]["kind"], "failed-write-visible");
}

TEST(Resource, NullFinalReadMeansEveryWriteWasLost) {
  HistoryBuilder h;
  h.write(1, "k0", {1}, "ok", 0, 1).read(2, "k0", nullptr, 5, 6);
  EXPECT_EQ(h.result("resource").verdict, Verdict::kInvalid);
}

TEST(Resource, AMissingWriteThatCompletedAfterTheFinalReadBeganIsUndecided) {
  HistoryBuilder h;  // the read proves nothing about a write still in flight when it began
  h.op(1, "invoke", "write", "k0", {{"token", nullptr}, {"value", {1}}}, 0);
  h.read(2, "k0", json::array(), 1, 2);
  h.op(1, "ok", "write", "k0", {{"token", nullptr}, {"value", {1}}}, 3);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kUnknown) << r.summary;
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(r.stats["writes_undecided"], 1);
  EXPECT_EQ(r.stats["undecided"][0]["kind"], "write-after-final-read");
}

TEST(Resource, OnlyAWriteCompletedStrictlyBeforeTheFinalReadsInvokeIsJudged) {
  auto verdict = [](double write_done) {
    HistoryBuilder h;
    h.write(1, "k0", {1}, "ok", 0, write_done).read(2, "k0", json::array(), 5, 6);
    return h.result("resource").verdict;
  };
  EXPECT_EQ(verdict(4.999), Verdict::kInvalid);
  EXPECT_EQ(verdict(5), Verdict::kUnknown) << "equal times: not before the read";
}

TEST(Resource, AWriteSeenByAFinalReadThatBeganBeforeItCompletedIsPresent) {
  HistoryBuilder h;  // the write took effect before its ok arrived: nothing is undecided
  h.op(1, "invoke", "write", "k0", {{"token", nullptr}, {"value", {1}}}, 0);
  h.read(2, "k0", {1}, 1, 2);
  h.op(1, "ok", "write", "k0", {{"token", nullptr}, {"value", {1}}}, 3);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.stats["writes_judged"], 1);
}

TEST(Resource, AFailedFinalReadLeavesTheLaterWriteUndecided) {
  HistoryBuilder h;  // the real final read failed: the last ok read began before the write
  h.read(1, "k0", json::array(), 10, 11).write(1, "k0", {5}, "ok", 20, 30);
  h.op(2, "invoke", "read", "k0", nullptr, 40).op(2, "fail", "read", "k0", nullptr, 50);
  EXPECT_EQ(h.result("resource").verdict, Verdict::kUnknown);
}

TEST(Resource, WritesWithoutAnyOkReadAreUndecidedNotValid) {
  HistoryBuilder h;
  h.write(1, "k0", {1}, "ok", 0, 1).write(2, "k0", {2}, "fail", 2, 3);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kUnknown) << r.summary;
  EXPECT_EQ(r.stats["undecided"][0]["kind"], "no-final-read");
  EXPECT_EQ(r.stats["writes_undecided"], 2);
  EXPECT_EQ(r.summary.find("the lost-update rule of k0 is undecided: it has 1 ok and 1 failed writes but no ok read"),
            0u) << r.summary;
}

TEST(Resource, EveryUndecidedKeyIsCountedAndTheFirstNamed) {
  HistoryBuilder h;
  h.write(1, "k0", {1}, "ok", 0, 1).write(2, "k1", {2}, "ok", 2, 3).write(3, "k2", {3}, "ok", 4, 5);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_EQ(r.stats["undecided"].size(), 3u);
  EXPECT_EQ(r.summary.find("the lost-update rule of k0 is undecided"), 0u) << r.summary;
  EXPECT_NE(r.summary.find("(and 2 more keys undecided)"), std::string::npos) << r.summary;
}

TEST(Resource, AFinalReadThatIsNotAListIsUndecided) {
  HistoryBuilder h;
  h.write(1, "k0", {1}, "ok", 0, 1).read(2, "k0", 7, 5, 6);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kUnknown) << r.summary;
  EXPECT_EQ(r.stats["undecided"][0]["kind"], "final-read-not-a-list");
}

TEST(Resource, AFailedWriteSeenByAnEarlierFinalReadIsStillAViolation) {
  HistoryBuilder h;  // a write that did not happen must never be visible, whenever it failed
  h.op(1, "invoke", "write", "k0", {{"token", nullptr}, {"value", {1}}}, 0);
  h.read(2, "k0", {1}, 1, 2);
  h.op(1, "fail", "write", "k0", {{"token", nullptr}, {"value", {1}}}, 3);
  EXPECT_EQ(h.result("resource").verdict, Verdict::kInvalid);
}

TEST(Resource, ElementsCompareAsCanonicalJson) {
  HistoryBuilder h;  // the history writes {"b":1,"a":2}; the read shows it minified
  h.write(1, "k0", json::array({json{{"id", 7}}}), "ok", 0, 1);
  h.raw(R"({"index":2,"time":5000000,"process":2,"type":"invoke","f":"read","key":"k0","value":null})");
  h.raw(R"({"index":3,"time":6000000,"process":2,"type":"ok","f":"read","key":"k0","value":[ { "id" : 7 } ]})");
  EXPECT_EQ(h.result("resource").verdict, Verdict::kValid);
}

// A write of `element` to k0 and a final read returning `read_list`, written as raw lines
// because HistoryBuilder's JSON would sort the keys itself.
CheckResult appended_then_read(const std::string& element, const std::string& read_list) {
  HistoryBuilder h;
  const std::string write_value = R"({"token":null,"value":[)" + element + "]}";
  h.raw(R"({"index":0,"time":0,"process":1,"type":"invoke","f":"write","key":"k0","value":)" + write_value + "}");
  h.raw(R"({"index":1,"time":1000000,"process":1,"type":"ok","f":"write","key":"k0","value":)" + write_value + "}");
  h.raw(R"({"index":2,"time":2000000,"process":2,"type":"invoke","f":"read","key":"k0","value":null})");
  h.raw(R"({"index":3,"time":3000000,"process":2,"type":"ok","f":"read","key":"k0","value":)" + read_list + "}");
  return h.result("resource");
}

TEST(Resource, KeyOrderAndNumberFormDoNotMakeALostUpdate) {
  auto same = appended_then_read(R"({"b":1,"a":2})", R"([{"a":2,"b":1}])");
  EXPECT_EQ(same.verdict, Verdict::kValid) << same.summary;
  auto nested = appended_then_read(R"({"z":{"y":[1.0,2],"x":null},"a":"\u00e9"})",
                                   R"([{"a":"é","z":{"x":null,"y":[1,2.0]}}])");
  EXPECT_EQ(nested.verdict, Verdict::kValid) << nested.summary;
  auto other = appended_then_read(R"({"b":1,"a":2})", R"([{"a":2,"b":3}])");
  ASSERT_EQ(other.verdict, Verdict::kInvalid) << other.summary;
  EXPECT_EQ(other.violations[0]["kind"], "lost-update");
  EXPECT_EQ(other.violations[0]["element"], json({{"a", 2}, {"b", 1}}));
}

}  // namespace
// Rule 3: an accepted cas must find what it expected, replaying the log in order.
TEST(Resource, AcceptedCasChainsFromNullAreValid) {
  HistoryBuilder h;
  h.resource_cas("k0", nullptr, 1, true).resource_cas("k0", nullptr, 2, false, "c2");
  h.resource_cas("k0", 1, 3, true, "c2").resource("k0", "write", nullptr, true, 7);
  h.resource_cas("k0", 7, 8, true).resource_cas("k1", nullptr, 4, true);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
}

TEST(Resource, AcceptedCasOnAMismatchIsAViolation) {
  HistoryBuilder h;
  h.resource_cas("k0", nullptr, 1, true).resource_cas("k0", nullptr, 2, true, "c2");
  auto r = h.result("resource");
  ASSERT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_EQ(r.violations[0]["kind"], "cas-on-mismatch");
  EXPECT_EQ(r.violations[0]["seq"], 1);
  EXPECT_NE(r.summary.find("expecting null while the key held 1"), std::string::npos) << r.summary;
}

TEST(Resource, RefusedCasChangesNothingAndCasComparesCanonicalJson) {
  HistoryBuilder h;
  h.resource_cas("k0", nullptr, json::parse(R"({"b":1,"a":2})"), true);
  h.resource_cas("k0", 5, 6, false);  // refused: the value stays
  h.resource_cas("k0", json::parse(R"({"a":2.0,"b":1})"), 3, true);
  auto r = h.result("resource");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
}

}  // namespace fencecheck::testing
