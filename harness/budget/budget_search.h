// The search behind `fencecheck budget` (issue 30): the boundary between the magnitudes of
// one fault (a pause's length, a cut's, a clock jump's, a restart delay) that a lock takes
// without a violation and those that break it. How a magnitude is actually tried is the
// Prober's business; this file is the pure algorithm and its record (budget.json).
//
// The search, for a fault whose violations lie above the boundary (kAbove: a longer pause
// breaks more); kBelow mirrors it (a shorter restart delay breaks more):
//  1. the breaking end (hi) is probed. If it breaks nothing: no boundary in range, the lock
//     took every magnitude (outcome kSafeEverywhere). Probing it first costs the fewest
//     runs when the lock is safe, and is the end a broken probe settles soonest.
//  2. the safe end (lo) is probed. If it breaks: no boundary in range, broken even there
//     (kBrokenEverywhere).
//  3. bisection on whole ms between the nearest safe and the nearest broken magnitude
//     until they are at most `resolution` apart. Bisection is the fewest probes a monotone
//     threshold allows (log2(range/resolution)); a noisier search (a rate curve fitted over
//     a sweep) would cost a sweep's probes on each side, with no better bracket. Each new
//     probe lies strictly between the bracket's ends, so the bracket only narrows.
// A probe is `tries` decided tries at one magnitude. It is broken at its first broken try
// when stop_at_first_break (the rest are skipped: one violation is the proof), else after
// all tries (its rate k/tries is then a real estimate, for the plot). It is safe only when
// all `tries` decided tries broke nothing. An undecided try (the run's verdict unknown, or
// the run failed as a harness) is not a decided one: it is tried again, up to `tries`
// undecided tries per probe; past that the probe is undecided and the search ends there
// (kUndecided). Three harness errors in a row end it too (stopped_by says so).
// With a flaky violation a safe probe is weak evidence (a violation of rate p at that
// magnitude is missed with probability (1-p)^tries): the boundary may lie lower than
// reported (for kAbove), never beyond the nearest broken probe (kBelow: mirrored).
//
// Budget: before each try the search adds up the seconds the tries so far *reported*
// (ProbeTry::seconds; it never reads a clock and never sleeps). Once that sum reaches
// budget_s no new try starts, and budget_exhausted says so: a bracket already known stands
// (kBoundary, wider than the resolution), else the search is kUndecided.
//
// Errors: search_budget() throws std::invalid_argument for bad options (lo < 0, lo >= hi,
// tries < 1, resolution < 1, a negative budget). Whatever the Prober throws ends the search
// and the result so far comes back with stopped_by saying why (Ctrl-C, a broken bench):
// kUndecided unless the bracket is already known. Thread-compatible: one search uses its
// Prober from the calling thread only, one try at a time; a call blocks as long as the
// Prober's tries take, at most tries * 2 * (2 + ceil(log2((hi - lo) / resolution))) tries.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

// Which side of the boundary the violations lie on.
enum class BreaksWhere { kAbove, kBelow };
std::string to_string(BreaksWhere w);  // "above", "below"

// One run at one magnitude.
struct ProbeTry {
  enum class Result { kSafe, kBroke, kUndecided, kHarnessError };
  Result result = Result::kSafe;
  double seconds = 0;      // what the try cost; the budget adds these up
  nlohmann::json detail;   // the Prober's record of it (run dir, checkers, classes): kept as is
};
std::string to_string(ProbeTry::Result r);  // "safe", "broke", "undecided", "harness-error"

// Tries magnitudes. The search owns nothing of it; it must outlive the search_budget() call.
class Prober {
 public:
  virtual ~Prober() = default;
  // One run at magnitude x (ms); attempt counts this magnitude's tries from 0, undecided
  // ones included. May throw: the search then ends (see above).
  virtual ProbeTry try_at(std::int64_t x, int attempt) = 0;
};

struct BudgetResult;

struct BudgetSearchOptions {
  std::int64_t lo = 0, hi = 0;  // the range, in the fault's unit (ms): 0 <= lo < hi
  BreaksWhere breaks = BreaksWhere::kAbove;
  int tries = 5;
  std::int64_t resolution = 100;  // bisection stops when the bracket is this narrow
  std::optional<double> budget_s;  // --budget; none: no limit
  bool stop_at_first_break = true;
  // Called after every try with the search so far (the probe in progress last), e.g. to
  // write budget.json, so that a search killed outright leaves what it probed. What it
  // throws leaves search_budget() (a file that cannot be written ends the search). Not in
  // to_json().
  std::function<void(const BudgetResult& so_far)> on_try = nullptr;
};

struct Probe {
  enum class Verdict { kSafe, kBroken, kUndecided, kCutShort };  // kCutShort: budget or stop
  std::int64_t magnitude = 0;
  std::vector<ProbeTry> tries;  // every try made, in order
  Verdict verdict = Verdict::kCutShort;
  int broke() const;
  int decided() const;  // safe + broke
  double seconds() const;
};
std::string to_string(Probe::Verdict v);  // "safe", "broken", "undecided", "cut-short"

struct BudgetResult {
  enum class Outcome { kBoundary, kSafeEverywhere, kBrokenEverywhere, kUndecided };
  BudgetSearchOptions options;
  std::vector<Probe> probes;  // in the order probed
  Outcome outcome = Outcome::kUndecided;
  // The bracket: the safe magnitude nearest the boundary, and the nearest broken one.
  // Both set when kBoundary; one of them (or neither) otherwise, or both when the bench
  // failed inside a known bracket (an undecided probe, harness errors in a row: kUndecided).
  std::optional<std::int64_t> safe_at, broken_at;
  bool budget_exhausted = false;
  std::string stopped_by;  // what ended the search early (the Prober's exception); else empty
  double seconds = 0;      // every try's reported seconds

  // 0 boundary found; 1 no boundary in range (kSafeEverywhere, kBrokenEverywhere);
  // 2 undecided (kUndecided: unknown runs, the budget, an interruption).
  int exit_code() const;
  // One sentence: "breaks between 900 and 1000 ms (safe at 900 in 5/5, broken at 1000 in 1/1)".
  std::string summary() const;
  nlohmann::json to_json() const;  // budget.json's "search": options, probes, outcome, bracket
};
std::string to_string(BudgetResult::Outcome o);  // "boundary", "safe-everywhere", …

// Runs the search described at the top of this file.
BudgetResult search_budget(Prober& prober, const BudgetSearchOptions& options);

}  // namespace fencecheck
