// Turns a stream of history events into per-key partitions of compact LinOps, pairing
// each invoke with its completion. `fail` ops and `info` reads are dropped here (they can
// never matter to a model); an invoke never completed (history cut short) is kept as an
// info op. A process retired by an `info` op while it held a lock gives the lock back at
// some unknown time after that op's invoke, or never: the collector adds that release as
// an implied `info` release (the exclusion checker ends the hold at the same invoke, and
// the worker does release a retired process's grant before it acquires that lock again).
// Register values are interned per key, so memory grows with the number of ops
// and distinct values, never with the JSON text.
//
// Events must come in file order and already be validated (history_validator.h). Values
// that do not have the documented shape are taken whole rather than rejected. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/linear/lin_op.h"

namespace fencecheck::linear {

struct CollectedCounts {
  std::uint64_t fail_dropped = 0;
  std::uint64_t info_reads_dropped = 0;
  std::uint64_t cut_short = 0;    // invokes with no completion, kept as info
  std::uint64_t implied_releases = 0;  // locks held by a process when an info retired it
  bool lock_ops = false;          // some acquire or release
  bool tokens = false;            // some ok acquire carries a token
  bool register_ops = false;      // some read or write
  bool cas_ops = false;           // some cas
};

class OpCollector {
 public:
  OpCollector();
  ~OpCollector();
  void observe(const Event& e);
  // Ends the history; the collector is empty afterwards.
  std::vector<Partition> take_partitions();
  const CollectedCounts& counts() const { return counts_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  CollectedCounts counts_;
};

}  // namespace fencecheck::linear
