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

// --- Pruning: the checker forgets grants that can no longer matter (tokens.cpp). Each
// test below breaks one wrong way of forgetting.

TEST(TokensPruning, ADuplicateOfAnOldTokenIsFoundWithTheFirstGrantInFull) {
  HistoryBuilder h;  // tokens 1..300 on l0, one at a time; then 150 again, then 1 again
  h.acquire(1, "l0", 0, 1, 1).release(1, "l0", 2, 3, 1);
  double t = 4;
  std::uint64_t line = 4;
  json first_150;
  for (int token = 2; token <= 300; ++token, t += 4, line += 4) {
    int p = 2 + token % 7;
    h.acquire(p, "l0", t, t + 1, token).release(p, "l0", t + 2, t + 3, token);
    if (token == 150) {
      first_150 = {{"process", p}, {"node", "c" + std::to_string(p)}, {"index", line + 1},
                   {"invoked", static_cast<std::int64_t>(t * 1e6)},
                   {"completed", static_cast<std::int64_t>((t + 1) * 1e6)}, {"token", 150}};
    }
  }
  h.acquire(20, "l0", t, t + 1, 150).release(20, "l0", t + 2, t + 3, 150);
  h.acquire(21, "l0", t + 4, t + 5, 1);
  auto r = h.result("tokens");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.count, 4u) << "two duplicates, each also below the highest token before it";
  ASSERT_EQ(r.violations.size(), 4u);
  EXPECT_EQ(r.violations[0]["kind"], "duplicate");
  EXPECT_EQ(r.violations[0]["first"], first_150);
  EXPECT_EQ(r.violations[0]["second"]["process"], 20);
  EXPECT_EQ(r.summary, "process " + std::to_string(first_150["process"].get<int>()) + " (c" +
                           std::to_string(first_150["process"].get<int>()) +
                           ") and process 20 (c20) were both granted token 150 on l0");
  EXPECT_EQ(r.violations[1]["kind"], "decreasing");
  EXPECT_EQ(r.violations[1]["earlier"]["token"], 300);
  EXPECT_EQ(r.violations[2]["kind"], "duplicate");
  EXPECT_EQ(r.violations[2]["first"]["process"], 1);
  EXPECT_EQ(r.violations[2]["first"]["index"], 1);
  EXPECT_EQ(r.violations[3]["kind"], "decreasing");
}

// p2's acquire is invoked at 4 and answered at 200 with token 5, while others were granted
// 10..60 in between: concurrent with all of them, so only the 1 granted before 4 counts.
TEST(TokensPruning, AnAcquireInFlightIsJudgedOnlyAgainstGrantsBeforeItsInvoke) {
  auto run = [](int token) {
    HistoryBuilder h;
    h.acquire(1, "l0", 0, 1, 1).release(1, "l0", 2, 3, 1);
    h.op(2, "invoke", "acquire", "l0", nullptr, 4);
    for (int i = 1; i <= 6; ++i) h.acquire(2 + i, "l0", i * 10, i * 10 + 1, i * 10).release(2 + i, "l0", i * 10 + 2, i * 10 + 3, i * 10);
    h.op(2, "ok", "acquire", "l0", {{"token", token}}, 200);
    return h.result("tokens");
  };
  auto concurrent = run(5);
  EXPECT_EQ(concurrent.verdict, Verdict::kValid) << concurrent.summary;
  auto below = run(0);
  ASSERT_EQ(below.verdict, Verdict::kInvalid);
  EXPECT_EQ(below.count, 1u);
  EXPECT_EQ(below.violations[0]["earlier"]["token"], 1);
}

TEST(TokensPruning, IncreasingTokensKeepStateOfTheProcessesNotOfTheHistory) {
  HistoryBuilder h;  // 4 processes take 2 locks in turn, 2000 grants in all
  double t = 0;
  int next[2] = {1, 1};
  for (int round = 0; round < 500; ++round) {
    for (int p = 1; p <= 4; ++p, t += 4) {
      std::string key = "l" + std::to_string(p % 2);
      int token = next[p % 2]++;
      h.acquire(p, key, t, t + 1, token).release(p, key, t + 2, t + 3, token);
    }
  }
  auto r = h.result("tokens");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.stats["with_token"], 2000);
  EXPECT_LE(r.stats["grants_kept_peak"].get<int>(), 4);
}

TEST(TokensPruning, EachKeyShowsItsLowestDuplicatesFirst) {
  HistoryBuilder h;  // 12 tokens each granted twice, the higher ones first
  double t = 0;
  for (int token = 12; token >= 1; --token, t += 8) {
    h.op(1, "invoke", "acquire", "l0", nullptr, t).op(2, "invoke", "acquire", "l0", nullptr, t);
    h.op(1, "ok", "acquire", "l0", {{"token", token}}, t + 1).op(2, "ok", "acquire", "l0", {{"token", token}}, t + 2);
    h.release(1, "l0", t + 3, t + 4, token).release(2, "l0", t + 5, t + 6, token);
  }
  auto r = h.result("tokens");
  EXPECT_EQ(r.count, 12u + 22u) << "12 duplicates; 11 pairs below an earlier grant";
  ASSERT_EQ(r.violations.size(), 10u);
  // The key's first ten by token (tokens 1..10), shown in the order they happened.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(r.violations[i]["kind"], "duplicate");
    EXPECT_EQ(r.violations[i]["token"], 10 - i);
  }
}

}  // namespace
}  // namespace fencecheck::testing
