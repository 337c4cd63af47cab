// Hand-made histories for every model, valid and invalid, with info and fail ops mixed in.
#include <gtest/gtest.h>

#include "tests/linear/test_history.h"

namespace fencecheck {
namespace {

using testing::TestHistory;
using testing::check_linearizable;

Verdict verdict(const TestHistory& h, const std::string& model = "") {
  return check_linearizable(h.events, model).verdict;
}

// ---- mutex ----

TEST(MutexModel, SequentialAcquireReleaseIsValid) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "release").ok(3, 0);
  h.inv(4, 1, "acquire").ok(5, 1).inv(6, 1, "release").ok(7, 1);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kValid);
}

TEST(MutexModel, TwoHoldersAtOnceIsInvalid) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 1, "acquire").ok(3, 1);
  auto r = check_linearizable(h.events, "mutex");
  EXPECT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 1u);
}

TEST(MutexModel, WaitingAcquireMayTakeEffectAfterTheRelease) {
  TestHistory h;
  h.inv(0, 0, "acquire").inv(1, 1, "acquire").ok(5, 0).inv(6, 0, "release").ok(8, 0).ok(9, 1);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kValid);
}

TEST(MutexModel, IsNotReentrant) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "acquire").ok(3, 0);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kInvalid);
}

TEST(MutexModel, ReleaseNeedsTheCallerToHoldTheLock) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 1, "release").ok(3, 1);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kInvalid);
  TestHistory free_release;
  free_release.inv(0, 1, "release").ok(1, 1);
  EXPECT_EQ(verdict(free_release, "mutex"), Verdict::kInvalid);
}

TEST(MutexModel, InfoAcquireMayNeverHaveTakenEffect) {
  TestHistory h;
  h.inv(0, 0, "acquire").info(2, 0).inv(5, 1, "acquire").ok(6, 1).inv(7, 1, "release").ok(8, 1);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kValid);
}

TEST(MutexModel, InfoReleaseMayHaveTakenEffect) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "release").info(3, 0);
  h.inv(5, 1, "acquire").ok(6, 1);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kValid);
}

TEST(MutexModel, InfoReleaseCannotTakeEffectBeforeItsInvoke) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 1, "acquire").ok(3, 1).inv(4, 0, "release").info(5, 0);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kInvalid);
}

// A process retired (an info op, here a read of the resource) while it held a lock gives
// the lock back some time after that op's invoke, or never: the worker releases a retired
// process's grant before it acquires that lock again, outside the history.
TEST(MutexModel, ALockHeldByARetiredProcessMayBeGivenBack) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "read", "null", "r").info(3, 0);
  h.inv(5, 1, "acquire").ok(6, 1).inv(7, 1, "release").ok(8, 1);
  auto r = check_linearizable(h.events, "mutex");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.stats["releases_implied_by_retirement"], 1);
}

TEST(MutexModel, TheImpliedReleaseCannotTakeEffectBeforeTheRetiringInvoke) {
  // p1's acquire completed at 3, before p0 invoked the op that retired it (4): p0 still
  // held the lock then.
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 1, "acquire").ok(3, 1);
  h.inv(4, 0, "write", R"({"token":null,"value":1})", "r").info(5, 0);
  auto r = check_linearizable(h.events, "mutex");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
}

TEST(MutexModel, OnlyALockStillHeldIsImpliedReleased) {
  // p0 released l (fail: the lock was no longer its own), then was retired holding nothing:
  // nothing is implied, and the failed release never took effect.
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "release").fail(3, 0).inv(4, 0, "read", "null", "r").info(5, 0);
  h.inv(6, 1, "acquire").ok(7, 1);
  auto r = check_linearizable(h.events, "mutex");
  EXPECT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.stats["releases_implied_by_retirement"], 0);
}

TEST(FencedMutexModel, ARetiredHoldersLockStillNeedsAHigherToken) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0, R"({"token":5})").inv(2, 0, "read", "null", "r").info(3, 0);
  h.inv(5, 1, "acquire").ok(6, 1, R"({"token":6})");
  EXPECT_EQ(verdict(h, "fenced-mutex"), Verdict::kValid);
  TestHistory lower;
  lower.inv(0, 0, "acquire").ok(1, 0, R"({"token":5})").inv(2, 0, "read", "null", "r").info(3, 0);
  lower.inv(5, 1, "acquire").ok(6, 1, R"({"token":4})");
  auto r = check_linearizable(lower.events, "fenced-mutex");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
}

TEST(MutexModel, FailedOpsNeverTakeEffect) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 1, "acquire").fail(3, 1).inv(4, 0, "release").ok(5, 0);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kValid);
  TestHistory failed_release;
  failed_release.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "release").fail(3, 0);
  failed_release.inv(4, 1, "acquire").ok(5, 1);
  EXPECT_EQ(verdict(failed_release, "mutex"), Verdict::kInvalid);
}

TEST(MutexModel, TimesCompareStrictly) {
  // The release returns at 5 and the acquire is invoked at 5: concurrent, so valid.
  TestHistory touching;
  touching.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "release").ok(5, 0).inv(5, 1, "acquire").ok(6, 1);
  EXPECT_EQ(verdict(touching, "mutex"), Verdict::kValid);
  // The acquire returns at 5, before the release is invoked at 6: invalid.
  TestHistory early;
  early.inv(0, 0, "acquire").ok(1, 0).inv(3, 1, "acquire").ok(5, 1).inv(6, 0, "release").ok(7, 0);
  EXPECT_EQ(verdict(early, "mutex"), Verdict::kInvalid);
}

TEST(MutexModel, InfoAcquireFollowedByItsProcessIsKept) {
  // Not a well-formed history (an info retires its process), but the checker alone must
  // not assume it: the release by p0 is only possible if the info acquire took effect.
  TestHistory h;
  h.inv(0, 0, "acquire").info(1, 0).inv(5, 0, "release").ok(6, 0).inv(7, 1, "acquire").ok(8, 1);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kValid);
}

TEST(MutexModel, UselessInfoAcquiresAreLeftOutOfTheSearch) {
  TestHistory h;
  h.inv(0, 0, "acquire").info(1, 0).inv(2, 1, "acquire").info(3, 1);
  h.inv(4, 2, "acquire").ok(5, 2).inv(6, 2, "release").ok(7, 2);
  auto r = check_linearizable(h.events, "mutex");
  EXPECT_EQ(r.verdict, Verdict::kValid);
  EXPECT_EQ(r.stats["useless_info_ops_left_out"], 2);
}

TEST(MutexModel, CutShortInvokeCountsAsInfo) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "release").inv(5, 1, "acquire").ok(6, 1);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kValid);
}

TEST(MutexModel, KeysAreCheckedSeparately) {
  TestHistory h;
  h.inv(0, 0, "acquire", "null", "a").ok(1, 0).inv(2, 1, "acquire", "null", "b").ok(3, 1);
  h.inv(4, 2, "acquire", "null", "b").ok(5, 2);
  auto r = check_linearizable(h.events, "mutex");
  EXPECT_EQ(r.verdict, Verdict::kInvalid);
  ASSERT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["key"], "b");
  EXPECT_EQ(r.stats["keys"], 2);
}

// ---- fenced-mutex ----

std::string tok(int t) { return "{\"token\":" + std::to_string(t) + "}"; }

TEST(FencedMutexModel, IncreasingTokensAreValid) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0, tok(1)).inv(2, 0, "release", tok(1)).ok(3, 0);
  h.inv(4, 1, "acquire").ok(5, 1, tok(2)).inv(6, 1, "release", tok(2)).ok(7, 1);
  EXPECT_EQ(verdict(h, "fenced-mutex"), Verdict::kValid);
}

TEST(FencedMutexModel, LowerTokenLaterIsInvalidButAPlainMutexAcceptsIt) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0, tok(5)).inv(2, 0, "release", tok(5)).ok(3, 0);
  h.inv(4, 1, "acquire").ok(5, 1, tok(3));
  EXPECT_EQ(verdict(h, "fenced-mutex"), Verdict::kInvalid);
  EXPECT_EQ(verdict(h, "mutex"), Verdict::kValid);
  auto r = check_linearizable(h.events);  // chosen from the history: tokens → fenced-mutex
  EXPECT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.stats["model"], "fenced-mutex");
}

TEST(FencedMutexModel, EqualTokensAreInvalid) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0, tok(4)).inv(2, 0, "release", tok(4)).ok(3, 0);
  h.inv(4, 1, "acquire").ok(5, 1, tok(4));
  EXPECT_EQ(verdict(h, "fenced-mutex"), Verdict::kInvalid);
}

TEST(FencedMutexModel, TokensPickTheOrderOfConcurrentAcquires) {
  // p0's acquire spans p1's whole hold: it must come after p1's release, so its token
  // must be the higher one.
  TestHistory good;
  good.inv(0, 0, "acquire").inv(0, 1, "acquire").ok(3, 1, tok(1)).inv(4, 1, "release", tok(1)).ok(5, 1);
  good.ok(10, 0, tok(2));
  EXPECT_EQ(verdict(good, "fenced-mutex"), Verdict::kValid);
  TestHistory bad;
  bad.inv(0, 0, "acquire").inv(0, 1, "acquire").ok(3, 1, tok(2)).inv(4, 1, "release", tok(2)).ok(5, 1);
  bad.ok(10, 0, tok(1));
  EXPECT_EQ(verdict(bad, "fenced-mutex"), Verdict::kInvalid);
  EXPECT_EQ(verdict(bad, "mutex"), Verdict::kValid);
}

TEST(FencedMutexModel, InfoAcquireTokenConstrainsNothing) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0, tok(1)).inv(2, 0, "release", tok(1)).ok(3, 0);
  h.inv(4, 1, "acquire").info(5, 1);
  h.inv(6, 2, "acquire").ok(7, 2, tok(2)).inv(8, 2, "release", tok(2)).info(9, 2);
  h.inv(10, 3, "acquire").ok(11, 3, tok(3));
  EXPECT_EQ(verdict(h, "fenced-mutex"), Verdict::kValid);
}

// ---- register ----

std::string wr(int v) { return "{\"token\":null,\"value\":" + std::to_string(v) + "}"; }

TEST(RegisterModel, ReadSeesTheLastWrite) {
  TestHistory h;
  h.inv(0, 1, "read").ok(1, 1, "null").inv(2, 0, "write", wr(1)).ok(3, 0).inv(4, 1, "read").ok(5, 1, "1");
  EXPECT_EQ(verdict(h, "register"), Verdict::kValid);
  TestHistory stale;
  stale.inv(0, 0, "write", wr(1)).ok(1, 0).inv(2, 1, "read").ok(3, 1, "null");
  EXPECT_EQ(verdict(stale, "register"), Verdict::kInvalid);
}

TEST(RegisterModel, NeverWrittenRegisterReadsNull) {
  TestHistory h;
  h.inv(0, 1, "read").ok(1, 1, "0");
  EXPECT_EQ(verdict(h, "register"), Verdict::kInvalid);
}

TEST(RegisterModel, InfoWriteMayTakeEffectLateButOnce) {
  TestHistory h;
  h.inv(0, 0, "write", wr(1)).info(1, 0).inv(2, 1, "read").ok(3, 1, "null").inv(4, 1, "read").ok(5, 1, "1");
  EXPECT_EQ(verdict(h, "register"), Verdict::kValid);
  h.inv(6, 1, "read").ok(7, 1, "null");
  EXPECT_EQ(verdict(h, "register"), Verdict::kInvalid);
}

TEST(RegisterModel, InfoWriteOfAValueNobodyReadsIsLeftOut) {
  TestHistory h;
  h.inv(0, 0, "write", wr(9)).info(1, 0).inv(2, 1, "write", wr(1)).ok(3, 1).inv(4, 2, "read").ok(5, 2, "1");
  auto r = check_linearizable(h.events, "register");
  EXPECT_EQ(r.verdict, Verdict::kValid);
  EXPECT_EQ(r.stats["useless_info_ops_left_out"], 1);
  TestHistory observed = h;
  observed.inv(6, 2, "read").ok(7, 2, "9");
  EXPECT_EQ(verdict(observed, "register"), Verdict::kValid);  // 9 is read: the write is kept
}

TEST(RegisterModel, FailedWriteAndInfoReadAreDropped) {
  TestHistory h;
  h.inv(0, 0, "write", wr(1)).fail(1, 0).inv(2, 1, "read").info(3, 1).inv(4, 2, "read").ok(5, 2, "null");
  EXPECT_EQ(verdict(h, "register"), Verdict::kValid);
  TestHistory bad;
  bad.inv(0, 0, "write", wr(1)).fail(1, 0).inv(2, 1, "read").ok(3, 1, "1");
  EXPECT_EQ(verdict(bad, "register"), Verdict::kInvalid);
}

TEST(RegisterModel, ConcurrentWritesMayTakeEitherOrder) {
  TestHistory h;
  h.inv(0, 0, "write", wr(1)).inv(0, 1, "write", wr(2)).ok(5, 0).ok(5, 1);
  h.inv(6, 2, "read").ok(7, 2, "1").inv(8, 2, "read").ok(9, 2, "1");
  EXPECT_EQ(verdict(h, "register"), Verdict::kValid);
  h.inv(10, 3, "read").ok(11, 3, "2");
  EXPECT_EQ(verdict(h, "register"), Verdict::kInvalid);
}

TEST(RegisterModel, ValuesCompareAsJson) {
  TestHistory h;
  h.inv(0, 0, "write", R"({"token":null,"value":{"b":1,"a":[1,2]}})").ok(1, 0);
  h.inv(2, 1, "read").ok(3, 1, R"({"a":[1,2],"b":1})");
  EXPECT_EQ(verdict(h, "register"), Verdict::kValid);
}

// ---- cas-register ----

std::string cas(int from, int to) {
  return "{\"expect\":" + std::to_string(from) + ",\"value\":" + std::to_string(to) + "}";
}

TEST(CasRegisterModel, CasSucceedsOnlyOnTheExpectedValue) {
  TestHistory h;
  h.inv(0, 0, "write", wr(0)).ok(1, 0).inv(2, 0, "cas", cas(0, 1)).ok(3, 0).inv(4, 1, "read").ok(5, 1, "1");
  EXPECT_EQ(verdict(h, "cas-register"), Verdict::kValid);
  TestHistory bad;
  bad.inv(0, 0, "write", wr(0)).ok(1, 0).inv(2, 0, "cas", cas(2, 1)).ok(3, 0);
  EXPECT_EQ(verdict(bad, "cas-register"), Verdict::kInvalid);
  TestHistory unwritten;
  unwritten.inv(0, 0, "cas", cas(0, 1)).ok(1, 0);
  EXPECT_EQ(verdict(unwritten, "cas-register"), Verdict::kInvalid);
}

TEST(CasRegisterModel, ModelIsChosenForCasHistoriesAndFailedCasIsDropped) {
  TestHistory h;
  h.inv(0, 0, "write", wr(0)).ok(1, 0).inv(2, 1, "cas", cas(3, 4)).fail(3, 1);
  h.inv(4, 2, "cas", cas(0, 2)).info(5, 2).inv(6, 3, "read").ok(7, 3, "2");
  auto r = check_linearizable(h.events);
  EXPECT_EQ(r.verdict, Verdict::kValid);
  EXPECT_EQ(r.stats["model"], "cas-register");
  EXPECT_NE(r.summary.find("cas-register"), std::string::npos);
}

TEST(CasRegisterModel, TwoCasFromOneValueCannotBothSucceed) {
  TestHistory h;
  h.inv(0, 0, "write", wr(0)).ok(1, 0);
  h.inv(2, 1, "cas", cas(0, 1)).inv(2, 2, "cas", cas(0, 2)).ok(4, 1).ok(4, 2);
  EXPECT_EQ(verdict(h, "cas-register"), Verdict::kInvalid);
  EXPECT_EQ(verdict(h, "register"), Verdict::kValid);  // cas is not a register op
}

// ---- the checker around the models ----

TEST(LinearizableChecker, SkippedWithoutOpsOfTheModel) {
  TestHistory h;
  h.nemesis(0, "partition").inv(1, 0, "read").ok(2, 0, "null");
  auto r = check_linearizable(h.events, "mutex");
  EXPECT_EQ(r.verdict, Verdict::kSkipped);
  EXPECT_EQ(check_linearizable(TestHistory{}.events).verdict, Verdict::kSkipped);
}

TEST(LinearizableChecker, KnowsItsModels) {
  EXPECT_TRUE(is_known_model(""));
  EXPECT_TRUE(is_known_model("fenced-mutex"));
  EXPECT_FALSE(is_known_model("semaphore"));
  EXPECT_NE(model_names().find("cas-register"), std::string::npos);
  CheckOptions opts;
  opts.model = "semaphore";
  EXPECT_THROW(make_linearizable_checker(opts), std::invalid_argument);
}

TEST(LinearizableChecker, ChoosesMutexForLockHistoriesWithoutTokens) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0, R"({"token":null})").inv(2, 0, "release", R"({"token":null})").ok(3, 0);
  auto r = check_linearizable(h.events);
  EXPECT_EQ(r.verdict, Verdict::kValid);
  EXPECT_EQ(r.stats["model"], "mutex");
  EXPECT_NE(r.summary.find("chosen from the history"), std::string::npos);
}

TEST(LinearizableChecker, ExplainsAViolation) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1'000'000'000, 0).inv(1'100'000'000, 2, "acquire");
  h.inv(1'200'000'000, 1, "acquire").ok(1'300'000'000, 1);
  auto r = check_linearizable(h.events, "mutex");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  const auto& v = r.violations.at(0);
  EXPECT_EQ(v["op"]["process"], 1);
  EXPECT_EQ(v["op"]["f"], "acquire");
  EXPECT_EQ(v["op"]["invoke_index"], 3);
  EXPECT_EQ(v["prefix_length"], 1);
  EXPECT_EQ(v["prefix_tail"][0]["process"], 0);
  EXPECT_EQ(v["state_after_prefix"], "the lock is held by process 0");
  ASSERT_EQ(v["concurrent"].size(), 1u);  // p2's acquire, cut short (p0's returned before)
  EXPECT_EQ(v["concurrent"][0]["process"], 2);
  EXPECT_NE(r.summary.find("acquire by process 1"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("1.200 s"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("held by process 0"), std::string::npos) << r.summary;
  EXPECT_EQ(r.first_violation_at, 1'300'000'000) << "when the op that cannot follow completed";
}

}  // namespace
}  // namespace fencecheck
