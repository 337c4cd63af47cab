// A liveness rule of the report: locks nobody held that nobody could take. For each key,
// the stretches between holds (report/timeline.h's holds: no client held it, as the
// history says) in which acquires of that key were refused (`fail`), from the first
// refused acquire's invoke to the last one's completion. kazoo #732 predicts such a
// stretch: a failed non-blocking acquire leaves its contender node behind, and every later
// acquire waits behind it while no one holds the lock.
//
// A held lock whose holder's process retired (an `info`) counts as nobody's from the
// retirement on, so a session the server still keeps shows here too, for as long as it
// lives: the figure says how long the lock was out of reach, not why. Pure function over
// values; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/timeline.h"

namespace fencecheck::report {

struct StuckLock {
  std::string key;
  Nanos from = 0, to = 0;  // the first refused acquire's invoke, the last one's completion
  std::uint64_t refused = 0;  // acquires of the key refused in [from, to], none granted
};

// The longest such stretch of every key with at least `min_refused` refused acquires,
// longest first.
std::vector<StuckLock> stuck_locks(const Timeline& t, std::uint64_t min_refused = 2);

}  // namespace fencecheck::report
