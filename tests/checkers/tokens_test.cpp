#include <gtest/gtest.h>

#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

TEST(Tokens, SkippedWithoutTokens) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).release(1, "l0", 2, 3);
  auto r = h.result("tokens");
  EXPECT_EQ(r.verdict, Verdict::kSkipped);
  EXPECT_EQ(h.check("tokens").exit_code(), 0);
}

TEST(Tokens, IncreasingTokensAreValid) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1).release(1, "l0", 2, 3, 1).acquire(2, "l0", 4, 5, 2);
  h.acquire(3, "l1", 6, 7, 1);  // keys are independent
  EXPECT_EQ(h.result("tokens").verdict, Verdict::kValid);
}

TEST(Tokens, DecreasingTokenAfterCompletedGrantIsInvalid) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 9).release(1, "l0", 2, 3, 9).acquire(2, "l0", 4, 5, 7);
  auto r = h.result("tokens");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["kind"], "decreasing");
  EXPECT_EQ(r.violations[0]["earlier"]["token"], 9);
  EXPECT_EQ(r.violations[0]["later"]["token"], 7);
  EXPECT_EQ(r.first_violation_at, 5'000'000);
  EXPECT_NE(r.summary.find("process 2 (c2) was granted token 7 on l0"), std::string::npos) << r.summary;
}

TEST(Tokens, ConcurrentAcquiresMayGetTokensInEitherOrder) {
  // Both acquires are in flight together: neither completed before the other was invoked.
  HistoryBuilder a;
  a.op(1, "invoke", "acquire", "l0", nullptr, 0).op(2, "invoke", "acquire", "l0", nullptr, 1);
  a.op(2, "ok", "acquire", "l0", {{"token", 5}}, 2).op(1, "ok", "acquire", "l0", {{"token", 6}}, 3);
  EXPECT_EQ(a.result("tokens").verdict, Verdict::kValid);
  HistoryBuilder b;
  b.op(1, "invoke", "acquire", "l0", nullptr, 0).op(2, "invoke", "acquire", "l0", nullptr, 1);
  b.op(2, "ok", "acquire", "l0", {{"token", 6}}, 2).op(1, "ok", "acquire", "l0", {{"token", 5}}, 3);
  EXPECT_EQ(b.result("tokens").verdict, Verdict::kValid);
}

TEST(Tokens, CompletionAtTheSameInstantAsInvokeIsConcurrent) {
  HistoryBuilder h;  // strict: X completed at 5, Y invoked at 5 → not "before"
  h.op(1, "invoke", "acquire", "l0", nullptr, 0).op(1, "ok", "acquire", "l0", {{"token", 9}}, 5);
  h.op(2, "invoke", "acquire", "l0", nullptr, 5).op(2, "ok", "acquire", "l0", {{"token", 3}}, 6);
  EXPECT_EQ(h.result("tokens").verdict, Verdict::kValid);
}

TEST(Tokens, DuplicateTokensAreInvalidEvenWhenConcurrent) {
  HistoryBuilder h;
  h.op(1, "invoke", "acquire", "l0", nullptr, 0).op(2, "invoke", "acquire", "l0", nullptr, 1);
  h.op(2, "ok", "acquire", "l0", {{"token", 4}}, 2).op(1, "ok", "acquire", "l0", {{"token", 4}}, 3);
  auto r = h.result("tokens");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["kind"], "duplicate");
  EXPECT_EQ(r.summary, "process 2 (c2) and process 1 (c1) were both granted token 4 on l0");
}

TEST(Tokens, SequentialDuplicateCountsOnce) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 4).acquire(2, "l0", 2, 3, 4);
  auto r = h.result("tokens");
  EXPECT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 1u);
}

TEST(Tokens, FailedAndInfoAcquiresAreIgnored) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 5);
  h.op(2, "invoke", "acquire", "l0", nullptr, 2).op(2, "info", "acquire", "l0", nullptr, 3);
  h.acquire(3, "l0", 4, 5, 6);
  EXPECT_EQ(h.result("tokens").verdict, Verdict::kValid);
}

TEST(Tokens, ViolationAgainstTheHighestEarlierTokenNotTheLatest) {
  HistoryBuilder h;  // 10 then 3 then 5: 5 is below 10 although above the latest grant
  h.acquire(1, "l0", 0, 1, 10).acquire(2, "l0", 2, 3, 3).acquire(3, "l0", 4, 5, 5);
  auto r = h.result("tokens");
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(r.violations[1]["earlier"]["token"], 10);
}

}  // namespace
}  // namespace fencecheck::testing
