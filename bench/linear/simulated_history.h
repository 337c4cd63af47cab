// Histories of a correct object (a mutex or a register) under random concurrency,
// produced one event at a time so that benchmarks measure the checker, not the storage
// of the input. Each op takes effect at a random instant between its invoke and its
// completion; `info_ops` ops, chosen at random, complete as info (an info acquire never
// took effect, an info release or write did, half of the info writes did not) and retire
// their process. Deterministic for a given seed. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "checkers/history.h"

namespace fencecheck::bench {

struct SimulationConfig {
  enum class Object { kMutex, kRegister } object = Object::kMutex;
  int processes = 32;
  int keys = 8;
  std::uint64_t ops = 500'000;  // ops invoked in all; the history has 2 events per op
  std::uint64_t info_ops = 2'500;
  // When nonzero, the info ops are chosen among the first `info_among_first` ops only.
  std::uint64_t info_among_first = 0;
  int register_values = 5;  // writes pick a value in [0, register_values)
  bool blocking_acquire = false;  // an acquire that finds the lock held waits, else fails
  std::uint64_t seed = 1;
};

class SimulatedHistory {
 public:
  explicit SimulatedHistory(const SimulationConfig& config);
  ~SimulatedHistory();
  bool next(Event& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck::bench
