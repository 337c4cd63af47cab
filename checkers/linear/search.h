// The Wing–Gong–Lowe linearizability search over one partition, with Lowe's just-in-time
// linearization (only ops invoked before the earliest pending return are candidates) and a
// memo of visited (set of linearized ops, model state) configurations.
//
// `info` ops have no return: they may be linearized anywhere after their invoke or never,
// so the search succeeds as soon as every non-info op is linearized. Info ops the model
// proves useless (models.h, useful_ops) are left out before the search starts.
//
// search_partition() is thread-safe for distinct partitions sharing one SearchBudget, and
// so are PartitionSearchers, one per thread: the budget's deadline, memory counter and stop
// flag are the only shared state. A hard input
// never makes it run unbounded: running out of time or of the memo's memory budget yields
// kOutOfTime/kOutOfMemory with how far the search got. Only the allocator's own
// std::bad_alloc can escape (the checker turns it into kOutOfMemory).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkers/linear/lin_op.h"
#include "checkers/linear/models.h"

namespace fencecheck::linear {

// Shared by all partitions of one check.
struct SearchBudget {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::size_t memory_limit = std::size_t{1} << 30;  // bytes of memo, summed over partitions
  std::atomic<std::size_t> memory_used{0};
  std::atomic<bool> stop{false};  // set to abandon every search (result kStopped)

  void set_time_limit(double seconds);
};

// The memory one search holds against a SearchBudget; all of it is given back when the
// charge is destroyed.
class BudgetCharge {
 public:
  explicit BudgetCharge(SearchBudget& budget) : budget_(budget) {}
  ~BudgetCharge() { budget_.memory_used -= charged_; }
  BudgetCharge(const BudgetCharge&) = delete;
  BudgetCharge& operator=(const BudgetCharge&) = delete;

  // Counts `bytes` more (even on failure, so that the destructor gives them back); false
  // when the budget's total now exceeds its limit.
  bool add(std::size_t bytes) {
    charged_ += bytes;
    return budget_.memory_used.fetch_add(bytes) + bytes <= budget_.memory_limit;
  }
  // Counts `bytes` more only if the budget's total stays within its limit.
  bool add_if_room(std::size_t bytes) {
    if (budget_.memory_used.fetch_add(bytes) + bytes <= budget_.memory_limit) {
      charged_ += bytes;
      return true;
    }
    budget_.memory_used -= bytes;
    return false;
  }
  std::size_t charged() const { return charged_; }

 private:
  SearchBudget& budget_;
  std::size_t charged_ = 0;
};

struct SearchOutcome {
  enum class Result { kLinearizable, kNotLinearizable, kOutOfTime, kOutOfMemory, kStopped };
  Result result = Result::kLinearizable;
  std::size_t ops = 0;          // ops of the model in the partition
  std::size_t searched = 0;     // of those, ops the search considered (useless infos left out)
  std::size_t deepest = 0;      // ops in the longest linearizable prefix found
  std::uint64_t steps = 0;      // model steps tried
  std::size_t memo_entries = 0;
  std::size_t memo_bytes = 0;   // memory the memo held (charged to the budget) at the end
  double seconds = 0;
  // kNotLinearizable only: the longest linearizable prefix (indices into Partition::ops,
  // in linearization order), the op that could not follow it, and the state after it.
  std::vector<std::uint32_t> prefix;
  std::int64_t blocked_op = -1;
  std::string state_after_prefix;
};

// Searches partitions one at a time on one thread. What a search allocates (its list of
// calls and returns, its memo's nodes and index) is kept, cleared, for the next: on a big
// history, paging in fresh memory costs as much as the search itself. The memory kept
// between searches is charged to the budget only while a search uses it. Not thread-safe:
// one per thread; the budget may be shared.
class PartitionSearcher {
 public:
  PartitionSearcher(ModelKind model, SearchBudget& budget);
  ~PartitionSearcher();
  PartitionSearcher(const PartitionSearcher&) = delete;
  PartitionSearcher& operator=(const PartitionSearcher&) = delete;

  SearchOutcome search(const Partition& partition);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One search, with memory of its own.
SearchOutcome search_partition(ModelKind model, const Partition& partition,
                               SearchBudget& budget);

}  // namespace fencecheck::linear
