// The shrink search against fake replayers: deterministic, flaky (seeded), never
// reproducing, and costly ones for the budget. Every try's seconds are made up; nothing
// sleeps.
#include "harness/shrink/shrink.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

namespace fencecheck {
namespace {

using Faults = std::vector<std::size_t>;

bool has(const Faults& faults, const Faults& needed) {
  return std::includes(faults.begin(), faults.end(), needed.begin(), needed.end());
}

// Reproduces when the candidate holds every needed fault and is at least min_length_s
// long — always (deterministic), or with probability p out of a seeded std::mt19937
// (flaky; raw draws, since std's distributions differ between libraries).
class FakeReplayer : public Replayer {
 public:
  explicit FakeReplayer(Faults needed, double min_length_s = 0) : needed_(std::move(needed)), min_length_s_(min_length_s) {}

  TryOutcome try_once(const ShrinkCandidate& c, int attempt) override {
    EXPECT_TRUE(std::is_sorted(c.faults.begin(), c.faults.end()));
    bool possible = c.length_s >= min_length_s_ && has(c.faults, needed_);
    bool reproduced = possible && (!rng_ || (*rng_)() < static_cast<std::uint32_t>(p_ * 4294967295.0));
    if (never_) reproduced = false;
    calls.push_back({c, attempt, reproduced});
    return {reproduced, seconds_per_try, reproduced ? "invalid" : "valid"};
  }

  void flaky(double p, std::uint32_t seed) { p_ = p, rng_.emplace(seed); }
  void never() { never_ = true; }

  struct Call {
    ShrinkCandidate candidate;
    int attempt;
    bool reproduced;
  };
  std::vector<Call> calls;
  double seconds_per_try = 1;

 private:
  Faults needed_;
  double min_length_s_;
  double p_ = 1;
  std::optional<std::mt19937> rng_;
  bool never_ = false;
};

Faults all_of(std::size_t n) {
  Faults f;
  for (std::size_t i = 0; i < n; ++i) f.push_back(i);
  return f;
}

// What holds for any search: a kept step reproduced on its last try and only then; a
// rejected one ran every try (unless the budget cut it); no fault set is tried twice
// at one length; the log matches the replayer's calls.
void expect_consistent_log(const ShrinkResult& r, const FakeReplayer& fake) {
  std::set<std::pair<Faults, double>> seen;
  std::size_t call = 0;
  for (const ShrinkStep& s : r.steps) {
    EXPECT_TRUE(seen.insert({s.candidate.faults, s.candidate.length_s}).second) << s.phase;
    ASSERT_FALSE(s.outcomes.empty());
    for (std::size_t i = 0; i < s.outcomes.size(); ++i, ++call) {
      ASSERT_LT(call, fake.calls.size());
      EXPECT_EQ(fake.calls[call].candidate, s.candidate);
      EXPECT_EQ(fake.calls[call].attempt, static_cast<int>(i));
      EXPECT_EQ(fake.calls[call].reproduced, s.outcomes[i].reproduced);
      if (i + 1 < s.outcomes.size()) {
        EXPECT_FALSE(s.outcomes[i].reproduced);
      }
    }
    EXPECT_EQ(s.kept, s.outcomes.back().reproduced);
    if (!s.kept && !s.cut_by_budget) {
      EXPECT_EQ(s.outcomes.size(), static_cast<std::size_t>(r.options.tries));
    }
  }
  if (!r.never_reproduced) {
    EXPECT_EQ(call + r.final_outcomes.size(), fake.calls.size());
  }
}

TEST(Shrink, KeepsExactlyTheTwoNeededFaultsOfTwelve) {
  FakeReplayer fake({3, 7});
  ShrinkResult r = shrink(12, 60, fake);
  EXPECT_EQ(r.final_candidate.faults, (Faults{3, 7}));
  EXPECT_EQ(r.rate(), "5/5");
  EXPECT_EQ(r.final_reproduced(), 5);
  EXPECT_FALSE(r.never_reproduced);
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_EQ(r.steps.front().phase, "original");
  EXPECT_EQ(r.steps.front().candidate, (ShrinkCandidate{all_of(12), 60}));
  // Any length reproduces here: the length goes straight to the floor (min_length_s).
  EXPECT_DOUBLE_EQ(r.final_candidate.length_s, 1.0);
  const Faults needed{3, 7};
  for (const ShrinkStep& s : r.steps)
    EXPECT_EQ(s.kept, s.phase == "length" || has(s.candidate.faults, needed)) << s.phase;
  expect_consistent_log(r, fake);
  // The final measurement is tries 0..4 of the final candidate.
  for (std::size_t i = fake.calls.size() - 5; i < fake.calls.size(); ++i)
    EXPECT_EQ(fake.calls[i].candidate, r.final_candidate);
}

TEST(Shrink, KeepsTheOneNeededFaultAndTriesNone) {
  FakeReplayer fake({5});
  ShrinkResult r = shrink(12, 30, fake);
  EXPECT_EQ(r.final_candidate.faults, (Faults{5}));
  EXPECT_EQ(r.rate(), "5/5");
  const auto none = std::find_if(r.steps.begin(), r.steps.end(), [](const ShrinkStep& s) { return s.phase == "no_faults"; });
  ASSERT_NE(none, r.steps.end());
  EXPECT_TRUE(none->candidate.faults.empty());
  EXPECT_FALSE(none->kept);
  expect_consistent_log(r, fake);
}

TEST(Shrink, AFailureNeedingNoFaultEndsWithNone) {
  FakeReplayer fake({});
  ShrinkResult r = shrink(8, 30, fake);
  EXPECT_EQ(r.final_candidate.faults, Faults{});
  const auto none = std::find_if(r.steps.begin(), r.steps.end(), [](const ShrinkStep& s) { return s.phase == "no_faults"; });
  ASSERT_NE(none, r.steps.end());
  EXPECT_TRUE(none->kept);
  EXPECT_DOUBLE_EQ(r.final_candidate.length_s, 1.0);
  expect_consistent_log(r, fake);
}

TEST(Shrink, KeepsAllFaultsWhenAllAreNeeded) {
  FakeReplayer fake(all_of(6), 30);
  ShrinkResult r = shrink(6, 30, fake);
  EXPECT_EQ(r.final_candidate, (ShrinkCandidate{all_of(6), 30}));
  EXPECT_EQ(r.rate(), "5/5");
  for (std::size_t i = 1; i < r.steps.size(); ++i) EXPECT_FALSE(r.steps[i].kept) << i;
  // Every single fault was left out once (each complement at the finest granularity).
  for (std::size_t f = 0; f < 6; ++f) {
    Faults without = all_of(6);
    without.erase(without.begin() + f);
    EXPECT_TRUE(std::any_of(r.steps.begin(), r.steps.end(),
                            [&](const ShrinkStep& s) { return s.candidate.faults == without; }))
        << f;
  }
  expect_consistent_log(r, fake);
}

TEST(Shrink, FlakyFailureKeepsTheNeededFaultsAndRejectsOthers) {
  FakeReplayer fake({3, 7});
  fake.flaky(0.6, 20261203);
  ShrinkResult r = shrink(12, 60, fake);
  EXPECT_TRUE(has(r.final_candidate.faults, Faults{3, 7}));
  EXPECT_EQ(r.final_candidate.faults, (Faults{3, 7}));  // this seed: no needed candidate lost
  EXPECT_TRUE(std::any_of(r.steps.begin(), r.steps.end(), [](const ShrinkStep& s) { return !s.kept; }));
  // Flakiness shows: some kept candidate failed before it reproduced.
  EXPECT_TRUE(std::any_of(r.steps.begin(), r.steps.end(),
                          [](const ShrinkStep& s) { return s.kept && s.outcomes.size() > 1; }));
  // The rate is what the fake did in its last five tries, all of the final candidate.
  ASSERT_EQ(r.final_outcomes.size(), 5u);
  int reproduced = 0;
  for (std::size_t i = fake.calls.size() - 5; i < fake.calls.size(); ++i) {
    EXPECT_EQ(fake.calls[i].candidate, r.final_candidate);
    reproduced += fake.calls[i].reproduced;
  }
  EXPECT_EQ(r.final_reproduced(), reproduced);
  EXPECT_EQ(r.rate(), std::to_string(reproduced) + "/5");
  EXPECT_LT(reproduced, 5);  // this seed: not 5/5, so the rate is really counted
  expect_consistent_log(r, fake);
}

TEST(Shrink, NeverReproducedKeepsTheOriginalAndStops) {
  FakeReplayer fake({});
  fake.never();
  ShrinkResult r = shrink(12, 60, fake);
  EXPECT_TRUE(r.never_reproduced);
  EXPECT_EQ(r.final_candidate, (ShrinkCandidate{all_of(12), 60}));
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].outcomes.size(), 5u);
  EXPECT_EQ(fake.calls.size(), 5u);  // the original's tries are the rate; not run again
  EXPECT_EQ(r.rate(), "0/5");
  EXPECT_EQ(r.to_json()["never_reproduced"], true);
}

TEST(Shrink, BudgetStopsNewTriesOnceExceeded) {
  FakeReplayer fake({3, 7});
  fake.seconds_per_try = 10;
  ShrinkOptions o;
  o.budget_s = 35;
  ShrinkResult r = shrink(12, 60, fake, o);
  // The original reproduces at once (10 s); the first chunk fails thrice (40 s > 35 s).
  EXPECT_EQ(fake.calls.size(), 4u);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_DOUBLE_EQ(r.seconds, 40);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_TRUE(r.steps[1].cut_by_budget);
  EXPECT_FALSE(r.steps[1].kept);
  EXPECT_EQ(r.final_candidate, r.original);
  EXPECT_EQ(r.rate(), "0/0");  // no try left for the final measurement
  EXPECT_FALSE(r.never_reproduced);
  EXPECT_EQ(r.to_json()["budget_exhausted"], true);
}

TEST(Shrink, BudgetCanCutTheFinalMeasurement) {
  FakeReplayer fake({0});
  ShrinkOptions o;
  o.budget_s = 0;  // only the first try starts (0 s spent is not over)
  ShrinkResult r = shrink(1, 10, fake, o);
  EXPECT_EQ(fake.calls.size(), 1u);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.rate(), "0/0");
}

TEST(Shrink, LengthShrinksTowardTheShortestThatReproduces) {
  FakeReplayer fake({2}, 4.0);
  ShrinkResult r = shrink(5, 60, fake);
  EXPECT_EQ(r.final_candidate.faults, (Faults{2}));
  EXPECT_GE(r.final_candidate.length_s, 4.0);
  EXPECT_LT(r.final_candidate.length_s, 5.0);  // within length_resolution_s of 4
  EXPECT_EQ(r.rate(), "5/5");
  EXPECT_TRUE(std::any_of(r.steps.begin(), r.steps.end(),
                          [](const ShrinkStep& s) { return s.phase == "length" && !s.kept; }));
  expect_consistent_log(r, fake);
}

TEST(Shrink, LengthFloorComesFromTheCaller) {
  FakeReplayer fake({2}, 4.0);
  ShrinkOptions o;
  o.length_floor = [](const ShrinkCandidate& c) { return 10.0 + static_cast<double>(c.faults.back()); };
  ShrinkResult r = shrink(5, 60, fake, o);
  EXPECT_DOUBLE_EQ(r.final_candidate.length_s, 12.0);  // the floor reproduces: kept at once
  EXPECT_EQ(std::count_if(r.steps.begin(), r.steps.end(), [](const ShrinkStep& s) { return s.phase == "length"; }), 1);
}

TEST(Shrink, FaultSubsetsAreTriedAtTheirFittedLength) {
  FakeReplayer fake({3}, 0);
  ShrinkOptions o;
  o.fit_length = [](const Faults& f) { return 2.0 + static_cast<double>(f.size()); };  // never above the kept
  ShrinkResult r = shrink(8, 60, fake, o);
  EXPECT_EQ(r.final_candidate.faults, (Faults{3}));
  EXPECT_LE(r.final_candidate.length_s, 3.0);
  for (const ShrinkStep& s : r.steps) {
    if (s.phase == "original") {
      EXPECT_DOUBLE_EQ(s.candidate.length_s, 60.0) << "the original keeps its length";
    }
    if (s.phase == "faults") {
      EXPECT_DOUBLE_EQ(s.candidate.length_s, std::min(60.0, 2.0 + static_cast<double>(s.candidate.faults.size())));
    }
  }
  expect_consistent_log(r, fake);
}

TEST(Shrink, AReplayerThatThrowsEndsTheSearchWithWhatItHad) {
  struct Throwing : FakeReplayer {
    Throwing() : FakeReplayer({2}) {}
    TryOutcome try_once(const ShrinkCandidate& c, int attempt) override {
      if (calls.size() == 3) throw std::runtime_error("interrupted (Ctrl-C)");
      return FakeReplayer::try_once(c, attempt);
    }
  } fake;
  ShrinkResult r = shrink(8, 60, fake);
  EXPECT_EQ(r.stopped_by, "interrupted (Ctrl-C)");
  EXPECT_EQ(r.steps.size(), 2u) << "the steps before the one it broke stand";
  EXPECT_TRUE(r.reproduced_any());
  EXPECT_EQ(r.to_json()["stopped_by"], "interrupted (Ctrl-C)");
}

TEST(Shrink, AnOriginalCutByTheBudgetIsNeitherReproducedNorNeverReproduced) {
  FakeReplayer fake({2});
  fake.never();
  fake.seconds_per_try = 100;
  ShrinkOptions o;
  o.budget_s = 50;
  ShrinkResult r = shrink(4, 60, fake, o);
  EXPECT_FALSE(r.reproduced_any());
  EXPECT_FALSE(r.never_reproduced) << "one try of five says too little";
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_EQ(fake.calls.size(), 1u);
}

TEST(Shrink, JsonRecordsEveryStepAndTheFinalRate) {
  FakeReplayer fake({1}, 20);
  ShrinkOptions o;
  o.budget_s = 1000;
  ShrinkResult r = shrink(3, 40, fake, o);
  nlohmann::json j = r.to_json();
  EXPECT_EQ(j["original"]["faults"], nlohmann::json({0, 1, 2}));
  EXPECT_EQ(j["options"]["tries"], 5);
  EXPECT_EQ(j["options"]["budget_s"], 1000.0);
  ASSERT_EQ(j["steps"].size(), r.steps.size());
  EXPECT_EQ(j["steps"][0]["phase"], "original");
  EXPECT_EQ(j["steps"][0]["kept"], true);
  EXPECT_EQ(j["steps"][0]["tries"].size(), 1u);
  EXPECT_EQ(j["steps"][0]["tries"][0]["note"], "invalid");
  EXPECT_EQ(j["final"]["faults"], nlohmann::json({1}));
  EXPECT_EQ(j["final"]["rate"], "5/5");
  EXPECT_EQ(j["final"]["tries"].size(), 5u);
  EXPECT_EQ(j["never_reproduced"], false);
  EXPECT_EQ(j["budget_exhausted"], false);
  EXPECT_DOUBLE_EQ(j["seconds"].get<double>(), static_cast<double>(fake.calls.size()));
  EXPECT_TRUE(ShrinkResult{}.to_json()["options"]["budget_s"].is_null());
}

TEST(Shrink, RejectsBadArguments) {
  FakeReplayer fake({});
  ShrinkOptions o;
  o.tries = 0;
  EXPECT_THROW(shrink(3, 10, fake, o), std::invalid_argument);
  EXPECT_THROW(shrink(3, 0, fake), std::invalid_argument);
  o = {};
  o.budget_s = -1;
  EXPECT_THROW(shrink(3, 10, fake, o), std::invalid_argument);
  EXPECT_TRUE(fake.calls.empty());
}

}  // namespace
}  // namespace fencecheck
