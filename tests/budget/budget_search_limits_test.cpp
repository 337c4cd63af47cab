// The budget search's limits against fake probers (fake_prober.h): the budget, interruption,
// undecided tries, harness errors, stop_at_first_break and invalid options.
#include "harness/budget/budget_search.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/budget/fake_prober.h"

namespace fencecheck {
namespace {

using testing::always;
using testing::expect_bracket;
using testing::expect_consistent;
using testing::FakeProber;
using testing::options;
using testing::Result;
using testing::Rule;
using testing::threshold;

// 10 s a try: the breaking end (broken, 1 try) and the safe end (safe, 5 tries) cost 60 s.
TEST(BudgetSearch, BudgetExhaustedWithTheBracketKnownStands) {
  FakeProber fake(threshold(2000, BreaksWhere::kAbove));
  fake.seconds_per_try = 10;
  BudgetSearchOptions o = options(0, 3000, 100);
  o.budget_s = 75;  // the probe at 1500 starts at 60 s and 70 s, not at 80 s
  BudgetResult r = search_budget(fake, o);
  expect_consistent(r, fake);
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kBoundary);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_TRUE(r.stopped_by.empty());
  ASSERT_EQ(r.probes.size(), 3u);
  EXPECT_EQ(r.probes[2].magnitude, 1500);
  EXPECT_EQ(r.probes[2].tries.size(), 2u);
  EXPECT_EQ(r.probes[2].verdict, Probe::Verdict::kCutShort);
  EXPECT_EQ(r.safe_at, 0);
  EXPECT_EQ(r.broken_at, 3000);
  EXPECT_DOUBLE_EQ(r.seconds, 80);
  EXPECT_NE(r.summary().find("the budget ran out before the bracket narrowed to 100 ms"), std::string::npos)
      << r.summary();

  FakeProber exact(threshold(2000, BreaksWhere::kAbove));
  exact.seconds_per_try = 10;
  o.budget_s = 60;  // reached after the two ends: no further try starts
  r = search_budget(exact, o);
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kBoundary);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_EQ(r.probes.size(), 2u);
  EXPECT_EQ(exact.calls.size(), 6u);
}

TEST(BudgetSearch, BudgetExhaustedBeforeTheBracketIsUndecided) {
  FakeProber fake(threshold(2000, BreaksWhere::kAbove));
  fake.seconds_per_try = 10;
  BudgetSearchOptions o = options(0, 3000, 100);
  o.budget_s = 25;
  BudgetResult r = search_budget(fake, o);
  expect_consistent(r, fake);
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kUndecided);
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_TRUE(r.budget_exhausted);
  ASSERT_EQ(r.probes.size(), 2u);
  EXPECT_EQ(r.probes[1].verdict, Probe::Verdict::kCutShort);
  EXPECT_EQ(r.probes[1].tries.size(), 2u);
  EXPECT_EQ(r.broken_at, 3000);
  EXPECT_FALSE(r.safe_at);
  EXPECT_EQ(r.summary().rfind("undecided: the budget of 25 s ran out after 30 s", 0), 0u) << r.summary();

  FakeProber none(always(Result::kSafe));
  o.budget_s = 0;
  r = search_budget(none, o);
  EXPECT_TRUE(none.calls.empty());
  EXPECT_TRUE(r.probes.empty());
  EXPECT_EQ(r.exit_code(), 2);
}

TEST(BudgetSearch, InterruptedKeepsWhatWasProbed) {
  FakeProber fake(threshold(2000, BreaksWhere::kAbove));
  fake.throw_at = 3;  // the breaking end (1 try), then the safe end's third try throws
  BudgetResult r = search_budget(fake, options(0, 3000, 100));
  expect_consistent(r, fake);
  EXPECT_EQ(r.stopped_by, "interrupted");
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kUndecided);
  EXPECT_EQ(r.exit_code(), 2);
  ASSERT_EQ(r.probes.size(), 2u);
  EXPECT_EQ(r.probes[0].verdict, Probe::Verdict::kBroken);
  EXPECT_EQ(r.probes[1].verdict, Probe::Verdict::kCutShort);
  EXPECT_EQ(r.probes[1].tries.size(), 2u);
  EXPECT_EQ(r.summary().rfind("undecided: stopped by interrupted", 0), 0u) << r.summary();

  FakeProber later(threshold(2000, BreaksWhere::kAbove));
  later.throw_at = 6;  // the first try of the probe at 1500: that probe is no probe
  r = search_budget(later, options(0, 3000, 100));
  expect_consistent(r, later);
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kBoundary);  // the bracket known stands
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.stopped_by, "interrupted");
  EXPECT_EQ(r.probes.size(), 2u);
}

TEST(BudgetSearch, UndecidedTriesAreRetried) {
  // Every magnitude's first two tries are undecided, the rest decided.
  Rule flaky_bench = [](std::int64_t x, int attempt) {
    if (attempt < 2) return attempt == 0 ? Result::kUndecided : Result::kHarnessError;
    return x >= 1000 ? Result::kBroke : Result::kSafe;
  };
  FakeProber fake(flaky_bench);
  BudgetResult r = search_budget(fake, options(0, 3000, 100));
  expect_consistent(r, fake);
  expect_bracket(r, 1000, BreaksWhere::kAbove);
  for (const Probe& p : r.probes) {
    EXPECT_EQ(p.tries.size(), p.verdict == Probe::Verdict::kBroken ? 3u : 7u);
    EXPECT_EQ(p.decided(), p.verdict == Probe::Verdict::kBroken ? 1 : 5);
  }
}

TEST(BudgetSearch, AProbeOfUndecidedTriesEndsTheSearch) {
  FakeProber fake(always(Result::kUndecided));
  BudgetResult r = search_budget(fake, options(0, 3000, 100));
  expect_consistent(r, fake);
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kUndecided);
  EXPECT_EQ(r.exit_code(), 2);
  ASSERT_EQ(r.probes.size(), 1u);
  EXPECT_EQ(r.probes[0].verdict, Probe::Verdict::kUndecided);
  EXPECT_EQ(r.probes[0].tries.size(), 5u);
  EXPECT_TRUE(r.stopped_by.empty());
  EXPECT_EQ(r.summary(), "undecided: the probe at 3000 ms had 5 undecided tries");

  // Inside a known bracket too: the bench failed, the search is undecided, the bracket kept.
  FakeProber inside([](std::int64_t x, int) {
    if (x == 1500) return Result::kUndecided;
    return x >= 1000 ? Result::kBroke : Result::kSafe;
  });
  r = search_budget(inside, options(0, 3000, 100));
  expect_consistent(r, inside);
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kUndecided);
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_EQ(r.probes.size(), 3u);
  EXPECT_EQ(r.safe_at, 0);
  EXPECT_EQ(r.broken_at, 3000);
}

TEST(BudgetSearch, ThreeHarnessErrorsInARowStop) {
  FakeProber fake(always(Result::kHarnessError));
  BudgetResult r = search_budget(fake, options(0, 3000, 100));
  expect_consistent(r, fake);
  EXPECT_EQ(fake.calls.size(), 3u);
  EXPECT_EQ(r.stopped_by, "3 harness errors in a row");
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kUndecided);
  EXPECT_EQ(r.exit_code(), 2);
  ASSERT_EQ(r.probes.size(), 1u);
  EXPECT_EQ(r.probes[0].verdict, Probe::Verdict::kCutShort);

  // Two in a row at each magnitude, then decided tries: the count starts over.
  FakeProber interleaved([](std::int64_t x, int attempt) {
    if (attempt < 2) return Result::kHarnessError;
    return x >= 1000 ? Result::kBroke : Result::kSafe;
  });
  r = search_budget(interleaved, options(0, 3000, 100));
  expect_consistent(r, interleaved);
  EXPECT_TRUE(r.stopped_by.empty());
  expect_bracket(r, 1000, BreaksWhere::kAbove);
}

TEST(BudgetSearch, WithoutStopAtFirstBreakEveryTryRuns) {
  // Breaks on the third try only, from 1000 ms on.
  Rule third = [](std::int64_t x, int attempt) { return x >= 1000 && attempt == 2 ? Result::kBroke : Result::kSafe; };
  BudgetSearchOptions o = options(0, 3000, 100);
  o.stop_at_first_break = false;
  FakeProber all(third);
  BudgetResult r = search_budget(all, o);
  expect_consistent(r, all);
  expect_bracket(r, 1000, BreaksWhere::kAbove);
  for (const Probe& p : r.probes) {
    EXPECT_EQ(p.tries.size(), 5u);
    EXPECT_EQ(p.broke(), p.verdict == Probe::Verdict::kBroken ? 1 : 0);
  }

  FakeProber first(third);
  r = search_budget(first, options(0, 3000, 100));
  for (const Probe& p : r.probes) EXPECT_EQ(p.tries.size(), p.verdict == Probe::Verdict::kBroken ? 3u : 5u);
}

TEST(BudgetSearch, InvalidOptionsThrow) {
  auto with = [](auto change) {
    BudgetSearchOptions o = options(0, 3000, 100);
    change(o);
    return o;
  };
  const std::vector<BudgetSearchOptions> bad = {
      with([](BudgetSearchOptions& o) { o.lo = -1; }),
      with([](BudgetSearchOptions& o) { o.lo = 3000; }),
      with([](BudgetSearchOptions& o) { o.lo = 3001; }),
      with([](BudgetSearchOptions& o) { o.tries = 0; }),
      with([](BudgetSearchOptions& o) { o.resolution = 0; }),
      with([](BudgetSearchOptions& o) { o.budget_s = -1; }),
      with([](BudgetSearchOptions& o) { o.budget_s = std::numeric_limits<double>::quiet_NaN(); }),
  };
  for (const BudgetSearchOptions& o : bad) {
    FakeProber fake(always(Result::kSafe));
    EXPECT_THROW(search_budget(fake, o), std::invalid_argument);
    EXPECT_TRUE(fake.calls.empty());
  }
  FakeProber fine(always(Result::kSafe));
  EXPECT_NO_THROW(search_budget(fine, with([](BudgetSearchOptions& o) { o.budget_s = 0; })));
}

}  // namespace
}  // namespace fencecheck
