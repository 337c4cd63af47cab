// FakeProber and the helpers shared by the budget search tests: a prober that answers each
// try by a rule and logs every call, rules (threshold, always), options(), and the checks
// every search must pass (expect_consistent, expect_bracket).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness/budget/budget_search.h"

namespace fencecheck::testing {

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
inline Rule threshold(std::int64_t t, BreaksWhere breaks) {
  return [=](std::int64_t x, int) {
    const bool broken = breaks == BreaksWhere::kAbove ? x >= t : x <= t;
    return broken ? Result::kBroke : Result::kSafe;
  };
}

inline Rule always(Result r) {
  return [=](std::int64_t, int) { return r; };
}

inline BudgetSearchOptions options(std::int64_t lo, std::int64_t hi, std::int64_t resolution,
                            BreaksWhere breaks = BreaksWhere::kAbove) {
  BudgetSearchOptions o;
  o.lo = lo, o.hi = hi, o.resolution = resolution, o.breaks = breaks;
  return o;
}

inline int max_probes(const BudgetSearchOptions& o) {
  const double steps = std::log2(static_cast<double>(o.hi - o.lo) / static_cast<double>(o.resolution));
  return 2 + static_cast<int>(std::ceil(steps));
}


// What holds for any search: the record matches the prober's calls (attempts count each
// magnitude's tries from 0), no magnitude is probed twice, each probe after the two ends
// lies strictly inside the bracket of the probes before it, the seconds add up, and each
// verdict matches its tries.
inline void expect_consistent(const BudgetResult& r, const FakeProber& fake) {
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

inline void expect_bracket(const BudgetResult& r, std::int64_t t, BreaksWhere breaks) {
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

}  // namespace fencecheck::testing
