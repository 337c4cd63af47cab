// A search that cannot finish must stop at its time or memory budget and say unknown.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/linear/test_history.h"

namespace fencecheck {
namespace {

using testing::TestHistory;
using testing::check_linearizable;

// 20 concurrent writes of distinct values and 20 concurrent reads of them, plus one read
// of a value never written: not linearizable, but only after exploring millions of prefixes.
TestHistory hard_register_history() {
  TestHistory h;
  const int n = 20;
  for (int i = 0; i < n; ++i) h.inv(0, i, "write", "{\"token\":null,\"value\":" + std::to_string(i) + "}");
  for (int i = 0; i < n; ++i) h.inv(0, 100 + i, "read");
  h.inv(0, 999, "read");
  for (int i = 0; i < n; ++i) h.ok(1000, i);
  for (int i = 0; i < n; ++i) h.ok(1000, 100 + i, std::to_string((i + 1) % n));
  h.ok(1000, 999, "12345");
  return h;
}

TEST(LinearizableBudget, TinyTimeLimitGivesUnknownQuickly) {
  auto start = std::chrono::steady_clock::now();
  auto r = check_linearizable(hard_register_history().events, "register", 0.2);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.verdict, Verdict::kUnknown) << r.summary;
  EXPECT_LT(took, 3.0);
  EXPECT_NE(r.summary.find("time limit"), std::string::npos) << r.summary;
  EXPECT_EQ(r.stats["keys_finished"], 0);
  ASSERT_EQ(r.stats["unfinished"].size(), 1u);
  EXPECT_EQ(r.stats["unfinished"][0]["result"], "out of time");
  EXPECT_GT(r.stats["unfinished"][0]["deepest_prefix"].get<int>(), 0);
}

TEST(LinearizableBudget, TinyMemoryLimitGivesUnknown) {
  auto r = check_linearizable(hard_register_history().events, "register", 30, 256 * 1024);
  EXPECT_EQ(r.verdict, Verdict::kUnknown) << r.summary;
  EXPECT_NE(r.summary.find("memory limit"), std::string::npos) << r.summary;
}

TEST(LinearizableBudget, ZeroTimeLimitStillDecidesTrivialKeys) {
  TestHistory h;
  h.inv(0, 0, "acquire").ok(1, 0).inv(2, 0, "release").ok(3, 0);
  EXPECT_EQ(check_linearizable(h.events, "mutex", 0).verdict, Verdict::kValid);
}

TEST(LinearizableBudget, AViolationOnOneKeyWinsOverUnknownOnAnother) {
  TestHistory h = hard_register_history();
  h.inv(2000, 5000, "write", "{\"token\":null,\"value\":7}", "other").ok(2001, 5000);
  h.inv(2002, 5001, "read", "null", "other").ok(2003, 5001, "8");
  auto r = check_linearizable(h.events, "register", 0.2);
  EXPECT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_EQ(r.violations[0]["key"], "other");
}

}  // namespace
}  // namespace fencecheck
