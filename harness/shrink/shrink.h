// The search behind `fencecheck shrink` (issue 19 item 3): given a failed run with N
// recorded faults and a test length, find a smaller run that still fails the same way —
// fewer faults by delta debugging (ddmin, Zeller & Hildebrandt 2002), then a shorter
// length by bisection. How a candidate is actually run is the Replayer's business; this
// file is the pure algorithm and its log (shrink.json).
//
// The search:
//  1. the original (all faults, full length) is tried up to `tries` times. If it never
//     reproduces, the search stops at once: never_reproduced, the original is the result.
//  2. ddmin over the fault indices: split the kept faults into n chunks, try each chunk,
//     then each chunk's complement; a candidate that reproduces becomes the kept set
//     (n back to 2 after a chunk, n-1 after a complement); otherwise n doubles, up to the
//     number of kept faults. A fault set already tried is not tried again. When one fault
//     is left, the empty set is tried too: a failure needing no fault at all is worth
//     knowing.
//  3. the length: first the floor (the largest of min_length_s and length_floor(kept
//     candidate)); if that does not reproduce, bisection between the floor (fails) and
//     the kept length (reproduces) until they are within length_resolution_s.
//  4. the final candidate is run `tries` times in full, for its reproduction rate (k/N).
// Each candidate of steps 1-3 gets up to `tries` tries and is kept as soon as one try
// reproduces (the rest are skipped); one with no reproduction in `tries` tries is
// rejected. With a flaky failure a rejection is weak evidence: the search can keep more
// faults, or a longer length, than strictly needed — never fewer than one kept candidate
// reproduced with.
//
// Budget: before each try the search adds up the seconds the tries so far *reported*
// (TryOutcome::seconds; it never reads a clock and never sleeps). Once that sum exceeds
// budget_s, no new try starts — the final measurement included, so its rate may be k/M
// with M < tries, or 0/0 — and budget_exhausted says so.
//
// Errors: shrink() throws std::invalid_argument for bad arguments (tries < 1, a length or
// resolution <= 0, a negative budget); whatever the Replayer throws ends the search, and
// the result so far comes back with stopped_by saying why. Thread-compatible: one search uses its Replayer
// from the calling thread only, one try at a time; a call blocks for as long as the
// Replayer's tries take (nothing else waits): at most tries * (faults^2 + 2*faults + 4 +
// log2(length/resolution)) tries, far fewer in practice (about 2*k*log2(faults) candidates
// for a failure needing k faults).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

// One run to replay: which of the original run's faults, and how long a test.
struct ShrinkCandidate {
  std::vector<std::size_t> faults;  // indices into the original run's fault list, ascending
  double length_s = 0;              // test length to replay
  bool operator==(const ShrinkCandidate&) const = default;
};

// What one replay of a candidate showed.
struct TryOutcome {
  bool reproduced = false;  // the same checker failed again
  double seconds = 0;       // what the try cost; the budget adds these up
  std::string verdict_note;  // for the log: the verdict, or why the try says nothing
};

// Runs candidates. The search owns nothing of it; it must outlive the shrink() call.
class Replayer {
 public:
  virtual ~Replayer() = default;
  // Replays the candidate once; attempt counts this candidate's tries from 0. May throw:
  // the search then ends with that exception.
  virtual TryOutcome try_once(const ShrinkCandidate& candidate, int attempt) = 0;
};

struct ShrinkOptions {
  int tries = 5;                         // tries per candidate, and for the final rate
  std::optional<double> budget_s;        // --budget; none: no limit
  double min_length_s = 1.0;             // no candidate is ever shorter
  double length_resolution_s = 1.0;      // bisection stops when the bounds are this close
  // The smallest meaningful length for a candidate's faults (e.g. its last fault's end
  // plus a margin); empty: min_length_s alone.
  std::function<double(const ShrinkCandidate&)> length_floor;
  // The length a fault subset is tried at during ddmin (e.g. its faults' span plus a
  // margin), never above the kept length; empty: the kept length. A subset kept keeps it.
  std::function<double(const std::vector<std::size_t>&)> fit_length;
};

// One candidate the search tried.
struct ShrinkStep {
  std::string phase;  // "original", "faults", "no_faults" or "length"
  ShrinkCandidate candidate;
  std::vector<TryOutcome> outcomes;  // the tries made, in order
  bool kept = false;                 // one try reproduced: it became the kept candidate
  bool cut_by_budget = false;        // fewer than `tries` tries, none reproduced, budget out
  double seconds() const;
};

struct ShrinkResult {
  ShrinkCandidate original;
  ShrinkOptions options;  // length_floor not recorded in to_json()
  std::vector<ShrinkStep> steps;
  ShrinkCandidate final_candidate;  // the original when nothing smaller reproduced
  // The final candidate's tries in full, for its rate: reproduced of final_outcomes.size().
  // When never_reproduced these are the original's tries (it is not run again).
  std::vector<TryOutcome> final_outcomes;
  bool never_reproduced = false;  // the original did not reproduce in `tries` tries
  bool budget_exhausted = false;
  // What the Replayer threw that ended the search early (Ctrl-C, a broken bench); empty
  // when it ran to its end. The steps so far stand.
  std::string stopped_by;
  // Some candidate reproduced (the original at least): final_candidate is one that did.
  bool reproduced_any() const;  // the budget stopped the search (or the final measurement)
  double seconds = 0;             // all tries' reported seconds, the final ones included

  int final_reproduced() const;
  std::string rate() const;  // "4/5"
  // The shrink.json document: options, every step with its tries, the final candidate
  // and its rate, never_reproduced, budget_exhausted.
  nlohmann::json to_json() const;
};

// Shrinks a failed run with `fault_count` recorded faults (indices 0..fault_count-1) and
// test length `length_s`. See the top of this file.
ShrinkResult shrink(std::size_t fault_count, double length_s, Replayer& replayer,
                    const ShrinkOptions& options = {});

}  // namespace fencecheck
