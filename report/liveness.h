// Liveness figures of a run: how fast clients got work done during each fault and after
// it healed, and how long each kind of op took to succeed again after the heal.
//
// For each fault window [start, end):
//  - during: ok completions per second inside [start, end) (none for a zero-length window);
//  - after: ok completions per second inside [end, end + length), the same length after
//    the heal, cut at the end of the history (none when that leaves nothing, or the fault
//    was still open at the end);
//  - recovery: per client op kind, the time from the heal to the first ok completion of
//    that kind at or after it (nullopt: none before the end; absent for a fault open at
//    the end), and the same over every kind.
// Overlapping windows are measured independently. Pure function over values; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/timeline.h"

namespace fencecheck::report {

struct FaultSpan {
  std::string fault;
  Nanos start = 0, end = 0;
  bool open_at_end = false;
};

struct WindowLiveness {
  FaultSpan span;
  std::optional<double> during_ok_per_s;
  std::optional<double> after_ok_per_s;
  Nanos after_length = 0;  // the "after" interval actually measured (cut at the end)
  std::map<OpFn, std::optional<Nanos>> recovery;  // every op kind that ever completed ok
  std::optional<Nanos> recovery_any;
};

struct Liveness {
  std::optional<double> overall_ok_per_s;  // over [first, end] of the history
  std::vector<OpFn> kinds;                 // op kinds with an ok completion, in enum order
  std::vector<WindowLiveness> windows;     // one per span, in the given order
};

// `oks` must be in time order (the history's order); first/end: the times of the
// history's first and last lines.
Liveness compute_liveness(const std::vector<OkCompletion>& oks, const std::vector<FaultSpan>& spans,
                          Nanos first, Nanos end);

}  // namespace fencecheck::report
