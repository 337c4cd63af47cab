// The budget search against fake probers (fake_prober.h): monotone thresholds (both
// directions), a noisy (seeded) one, ones that never or always break; the summary, the
// names and to_json. Every try's seconds are made up; nothing sleeps.
#include "harness/budget/budget_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "tests/budget/fake_prober.h"

namespace fencecheck {
namespace {

using testing::always;
using testing::expect_bracket;
using testing::expect_consistent;
using testing::FakeProber;
using testing::max_probes;
using testing::options;
using testing::Result;
using testing::threshold;

TEST(BudgetSearch, MonotoneAboveBracketsTheThreshold) {
  for (const BudgetSearchOptions& o : {options(0, 3000, 100), options(200, 1234, 7), options(0, 1, 1)}) {
    for (std::int64_t t = o.lo + 1; t <= o.hi; ++t) {
      SCOPED_TRACE("range " + std::to_string(o.lo) + "-" + std::to_string(o.hi) + ", threshold " + std::to_string(t));
      FakeProber fake(threshold(t, BreaksWhere::kAbove));
      BudgetResult r = search_budget(fake, o);
      expect_bracket(r, t, BreaksWhere::kAbove);
      expect_consistent(r, fake);
      ASSERT_GE(r.probes.size(), 2u);
      EXPECT_EQ(r.probes[0].magnitude, o.hi);  // the breaking end first
      EXPECT_EQ(r.probes[1].magnitude, o.lo);
      for (const Probe& p : r.probes) EXPECT_EQ(p.tries.size(), p.verdict == Probe::Verdict::kBroken ? 1u : 5u);
    }
  }
}

TEST(BudgetSearch, MonotoneBelowMirrors) {
  for (const BudgetSearchOptions& o :
       {options(0, 3000, 100, BreaksWhere::kBelow), options(200, 1234, 7, BreaksWhere::kBelow)}) {
    for (std::int64_t t = o.lo; t < o.hi; ++t) {
      SCOPED_TRACE("range " + std::to_string(o.lo) + "-" + std::to_string(o.hi) + ", threshold " + std::to_string(t));
      FakeProber fake(threshold(t, BreaksWhere::kBelow));
      BudgetResult r = search_budget(fake, o);
      expect_bracket(r, t, BreaksWhere::kBelow);
      expect_consistent(r, fake);
      ASSERT_GE(r.probes.size(), 2u);
      EXPECT_EQ(r.probes[0].magnitude, o.lo);  // the breaking end of kBelow
      EXPECT_EQ(r.probes[1].magnitude, o.hi);
    }
  }
}

TEST(BudgetSearch, SummaryOfABoundary) {
  FakeProber above(threshold(950, BreaksWhere::kAbove));
  BudgetResult r = search_budget(above, options(0, 3000, 100));
  EXPECT_EQ(r.summary(), "breaks between 937 and 1031 ms (safe at 937 ms in 5/5 tries, broken at 1031 ms in 1/1)");
  FakeProber below(threshold(950, BreaksWhere::kBelow));
  r = search_budget(below, options(0, 3000, 100, BreaksWhere::kBelow));
  EXPECT_EQ(r.summary(), "breaks between 938 and 1032 ms (safe at 1032 ms in 5/5 tries, broken at 938 ms in 1/1)");
}

// The chance of a try breaking rises linearly from 0 at 800 ms to 1 at 1800 ms (kAbove;
// mirrored for kBelow), drawn from a seeded std::mt19937 (raw draws: std's distributions
// differ between libraries).
TEST(BudgetSearch, NoisyThresholdStillBrackets) {
  for (BreaksWhere breaks : {BreaksWhere::kAbove, BreaksWhere::kBelow}) {
    for (std::uint32_t seed = 1; seed <= 200; ++seed) {
      SCOPED_TRACE(to_string(breaks) + ", seed " + std::to_string(seed));
      std::mt19937 rng(seed);
      FakeProber fake([&](std::int64_t x, int) {
        const double depth = static_cast<double>(breaks == BreaksWhere::kAbove ? x : 3000 - x);
        const double p = std::clamp((depth - 800) / 1000, 0.0, 1.0);
        return rng() < static_cast<std::uint32_t>(p * 4294967295.0) ? Result::kBroke : Result::kSafe;
      });
      BudgetResult r = search_budget(fake, options(0, 3000, 100, breaks));
      expect_consistent(r, fake);
      ASSERT_EQ(r.outcome, BudgetResult::Outcome::kBoundary);
      EXPECT_LE(static_cast<int>(r.probes.size()), max_probes(r.options));
      EXPECT_LE(std::abs(*r.broken_at - *r.safe_at), 100);
      // Nothing breaks where p is 0, nothing is safe where p is 1.
      const std::int64_t never_broken = breaks == BreaksWhere::kAbove ? 800 : 2200;
      const std::int64_t never_safe = breaks == BreaksWhere::kAbove ? 1800 : 1200;
      if (breaks == BreaksWhere::kAbove) {
        EXPECT_GT(*r.broken_at, never_broken);
        EXPECT_LT(*r.safe_at, never_safe);
      } else {
        EXPECT_LT(*r.broken_at, never_broken);
        EXPECT_GT(*r.safe_at, never_safe);
      }
      // No safe magnitude lies on the breaking side of a broken one.
      for (const Probe& s : r.probes) {
        for (const Probe& b : r.probes) {
          if (s.verdict != Probe::Verdict::kSafe || b.verdict != Probe::Verdict::kBroken) continue;
          if (breaks == BreaksWhere::kAbove) EXPECT_LT(s.magnitude, b.magnitude);
          else EXPECT_GT(s.magnitude, b.magnitude);
        }
      }
    }
  }
}

TEST(BudgetSearch, SafeEverywhereProbesOnlyTheBreakingEnd) {
  FakeProber fake(always(Result::kSafe));
  BudgetResult r = search_budget(fake, options(0, 3000, 100));
  expect_consistent(r, fake);
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kSafeEverywhere);
  EXPECT_EQ(r.exit_code(), 1);
  ASSERT_EQ(r.probes.size(), 1u);
  EXPECT_EQ(r.probes[0].magnitude, 3000);
  EXPECT_EQ(r.probes[0].tries.size(), 5u);
  EXPECT_EQ(r.safe_at, 3000);
  EXPECT_FALSE(r.broken_at);
  EXPECT_EQ(r.summary(), "no boundary in 0\u20133000 ms: safe at every magnitude probed, up to 3000 ms (5/5 tries)");

  FakeProber below(always(Result::kSafe));
  r = search_budget(below, options(0, 3000, 100, BreaksWhere::kBelow));
  ASSERT_EQ(r.probes.size(), 1u);
  EXPECT_EQ(r.probes[0].magnitude, 0);
  EXPECT_EQ(r.summary(), "no boundary in 0\u20133000 ms: safe at every magnitude probed, down to 0 ms (5/5 tries)");
}

TEST(BudgetSearch, BrokenEverywhereEndsAtTheSafeEnd) {
  FakeProber fake(always(Result::kBroke));
  BudgetResult r = search_budget(fake, options(0, 3000, 100));
  expect_consistent(r, fake);
  EXPECT_EQ(r.outcome, BudgetResult::Outcome::kBrokenEverywhere);
  EXPECT_EQ(r.exit_code(), 1);
  ASSERT_EQ(r.probes.size(), 2u);
  EXPECT_EQ(r.probes[0].magnitude, 3000);
  EXPECT_EQ(r.probes[1].magnitude, 0);
  EXPECT_EQ(r.broken_at, 0);
  EXPECT_FALSE(r.safe_at);
  EXPECT_EQ(r.summary(), "no boundary in 0\u20133000 ms: broken even at 0 ms (1/1)");
}

TEST(BudgetSearch, ToJsonHasTheRecord) {
  FakeProber fake(threshold(950, BreaksWhere::kAbove));
  BudgetSearchOptions o = options(0, 3000, 100);
  o.budget_s = 1000;
  BudgetResult r = search_budget(fake, o);
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j.at("options"), (nlohmann::json{{"lo", 0},
                                             {"hi", 3000},
                                             {"breaks", "above"},
                                             {"tries", 5},
                                             {"resolution", 100},
                                             {"budget_s", 1000.0},
                                             {"stop_at_first_break", true}}));
  ASSERT_EQ(j.at("probes").size(), r.probes.size());
  const nlohmann::json& first = j.at("probes")[0];
  EXPECT_EQ(first.at("magnitude"), 3000);
  EXPECT_EQ(first.at("verdict"), "broken");
  EXPECT_EQ(first.at("broke"), 1);
  EXPECT_EQ(first.at("decided"), 1);
  EXPECT_EQ(first.at("seconds"), 1.0);
  const nlohmann::json first_try = {{"result", "broke"}, {"seconds", 1.0}, {"detail", {{"call", 0}, {"x", 3000}}}};
  EXPECT_EQ(first.at("tries"), nlohmann::json::array({first_try}));
  EXPECT_EQ(j.at("probes")[1].at("verdict"), "safe");
  EXPECT_EQ(j.at("probes")[1].at("tries").size(), 5u);
  EXPECT_EQ(j.at("outcome"), "boundary");
  EXPECT_EQ(j.at("safe_at"), 937);
  EXPECT_EQ(j.at("broken_at"), 1031);
  EXPECT_EQ(j.at("budget_exhausted"), false);
  EXPECT_EQ(j.at("stopped_by"), "");
  EXPECT_EQ(j.at("seconds"), r.seconds);
  EXPECT_EQ(j.at("summary"), r.summary());

  FakeProber safe(always(Result::kSafe));
  const nlohmann::json s = search_budget(safe, options(0, 3000, 100, BreaksWhere::kBelow)).to_json();
  EXPECT_EQ(s.at("options").at("breaks"), "below");
  EXPECT_TRUE(s.at("options").at("budget_s").is_null());
  EXPECT_EQ(s.at("outcome"), "safe-everywhere");
  EXPECT_EQ(s.at("safe_at"), 0);
  EXPECT_TRUE(s.at("broken_at").is_null());
}

TEST(BudgetSearch, Names) {
  EXPECT_EQ(to_string(BreaksWhere::kBelow), "below");
  EXPECT_EQ(to_string(ProbeTry::Result::kHarnessError), "harness-error");
  EXPECT_EQ(to_string(Probe::Verdict::kCutShort), "cut-short");
  EXPECT_EQ(to_string(BudgetResult::Outcome::kBrokenEverywhere), "broken-everywhere");
}

}  // namespace
}  // namespace fencecheck
