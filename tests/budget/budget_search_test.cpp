// The budget search against fake probers: monotone thresholds (both directions), a noisy
// (seeded) one, ones that never or always break, costly ones for the budget, interrupted,
// undecided and failing benches. Every try's seconds are made up; nothing sleeps.
#include "harness/budget/budget_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fencecheck {
namespace {

using Result = ProbeTry::Result;
using Rule = std::function<Result(std::int64_t x, int attempt)>;

// Answers each try by `rule`, costing seconds_per_try; throws on call number throw_at
// (counting from 0) when set. Logs every call.
class FakeProber : public Prober {
 public:
  explicit FakeProber(Rule rule) : rule_(std::move(rule)) {}

  ProbeTry try_at(std::int64_t x, int attempt) override {
    if (throw_at && calls.size() == *throw_at) throw std::runtime_error("interrupted");
    calls.push_back({x, attempt});
    ProbeTry t;
    t.result = rule_(x, attempt);
    t.seconds = seconds_per_try;
    t.detail = {{"call", calls.size() - 1}, {"x", x}};
    return t;
  }

  struct Call {
    std::int64_t x;
    int attempt;
  };
  std::vector<Call> calls;
  double seconds_per_try = 1;
  std::optional<std::size_t> throw_at;

 private:
  Rule rule_;
};

// Breaks from threshold t on: at x >= t (kAbove) or x <= t (kBelow).
Rule threshold(std::int64_t t, BreaksWhere breaks) {
  return [=](std::int64_t x, int) {
    const bool broken = breaks == BreaksWhere::kAbove ? x >= t : x <= t;
    return broken ? Result::kBroke : Result::kSafe;
  };
}

Rule always(Result r) {
  return [=](std::int64_t, int) { return r; };
}

BudgetSearchOptions options(std::int64_t lo, std::int64_t hi, std::int64_t resolution,
                            BreaksWhere breaks = BreaksWhere::kAbove) {
  BudgetSearchOptions o;
  o.lo = lo, o.hi = hi, o.resolution = resolution, o.breaks = breaks;
  return o;
}

int max_probes(const BudgetSearchOptions& o) {
  const double steps = std::log2(static_cast<double>(o.hi - o.lo) / static_cast<double>(o.resolution));
  return 2 + static_cast<int>(std::ceil(steps));
}

// What holds for any search: the record matches the prober's calls (attempts count each
// magnitude's tries from 0), no magnitude is probed twice, each probe after the two ends
// lies strictly inside the bracket of the probes before it, the seconds add up, and each
// verdict matches its tries.
void expect_consistent(const BudgetResult& r, const FakeProber& fake) {
  std::size_t call = 0;
  double seconds = 0;
  std::optional<std::int64_t> safe, broken;
  for (std::size_t i = 0; i < r.probes.size(); ++i) {
    const Probe& p = r.probes[i];
    SCOPED_TRACE("probe at " + std::to_string(p.magnitude));
    ASSERT_FALSE(p.tries.empty());
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(r.probes[j].magnitude, p.magnitude);
    if (i >= 2 && safe && broken) {
      EXPECT_GT(p.magnitude, std::min(*safe, *broken));
      EXPECT_LT(p.magnitude, std::max(*safe, *broken));
    }
    for (std::size_t k = 0; k < p.tries.size(); ++k, ++call) {
      ASSERT_LT(call, fake.calls.size());
      EXPECT_EQ(fake.calls[call].x, p.magnitude);
      EXPECT_EQ(fake.calls[call].attempt, static_cast<int>(k));
      EXPECT_EQ(p.tries[k].detail.at("call"), call);
      seconds += p.tries[k].seconds;
    }
    if (p.verdict == Probe::Verdict::kSafe) {
      EXPECT_EQ(p.broke(), 0);
      EXPECT_EQ(p.decided(), r.options.tries);
      safe = p.magnitude;
    }
    if (p.verdict == Probe::Verdict::kBroken) {
      EXPECT_GT(p.broke(), 0);
      broken = p.magnitude;
    }
  }
  EXPECT_EQ(call, fake.calls.size());
  EXPECT_DOUBLE_EQ(r.seconds, seconds);
  EXPECT_EQ(r.safe_at, safe);
  EXPECT_EQ(r.broken_at, broken);
}

void expect_bracket(const BudgetResult& r, std::int64_t t, BreaksWhere breaks) {
  ASSERT_EQ(r.outcome, BudgetResult::Outcome::kBoundary) << r.summary();
  EXPECT_EQ(r.exit_code(), 0);
  ASSERT_TRUE(r.safe_at && r.broken_at);
  EXPECT_LE(std::abs(*r.broken_at - *r.safe_at), r.options.resolution);
  if (breaks == BreaksWhere::kAbove) {
    EXPECT_LT(*r.safe_at, t);
    EXPECT_GE(*r.broken_at, t);
  } else {
    EXPECT_GT(*r.safe_at, t);
    EXPECT_LE(*r.broken_at, t);
  }
  EXPECT_LE(static_cast<int>(r.probes.size()), max_probes(r.options));
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_TRUE(r.stopped_by.empty());
}

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
