// Sets of op ranks with O(1) exact equality, for the search's memo (memo.h).
//
// A set is a list of its nonempty 64-rank chunks, highest first, each cell holding a
// chunk number, the bitmask of the chunk's members and the rest of the list. Cells are
// hash-consed: each (chunk, bits, rest) exists at most once, so every distinct set has
// exactly one id and two sets are equal if and only if their ids are. Cells are found by
// comparing their contents, never by trusting a hash, so equality cannot be fooled by a
// collision.
//
// insert() keeps the cells below the new rank's chunk and rebuilds that chunk and the
// ones above it, so it costs one table probe per nonempty chunk above, plus one. The
// search inserts ranks in nearly increasing order (an op is linearized soon after its
// invoke), so that is one or two probes however many ops the set holds; and sets that
// share their lower chunks share those cells, so a new set costs a cell or two.
//
// Memory (cells and their index) is charged to a SearchBudget and given back on
// destruction. Not thread-safe: one per search.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "checkers/linear/models.h"
#include "checkers/linear/search.h"

namespace fencecheck::linear {

class OpSets {
 public:
  using Id = std::uint32_t;
  static constexpr Id kEmpty = 0;              // the empty set
  static constexpr Id kNoMemory = 0xffffffffU;  // insert() could not get memory

  explicit OpSets(SearchBudget& budget) : charge_(budget) {}
  OpSets(const OpSets&) = delete;
  OpSets& operator=(const OpSets&) = delete;

  // The id of `set` with `rank` added (a no-op if it is in already). kNoMemory when the
  // budget refuses the memory the new cells need.
  Id insert(Id set, std::uint32_t rank) {
    const std::uint32_t chunk = rank / 64;
    std::uint64_t bits = std::uint64_t{1} << (rank % 64);
    above_.clear();
    while (set != kEmpty && cells_[set].chunk > chunk) {
      above_.push_back(cells_[set]);
      set = cells_[set].rest;
    }
    if (set != kEmpty && cells_[set].chunk == chunk) {
      bits |= cells_[set].bits;
      set = cells_[set].rest;
    }
    set = cons(Cell{bits, chunk, set});
    for (std::size_t k = above_.size(); k-- > 0 && set != kNoMemory;) {
      set = cons(Cell{above_[k].bits, above_[k].chunk, set});
    }
    return set;
  }

  std::size_t cells() const { return cells_.empty() ? 0 : cells_.size() - 1; }
  std::size_t bytes_charged() const { return charge_.charged(); }

 private:
  struct Cell {
    std::uint64_t bits;   // members of the chunk, never 0
    std::uint32_t chunk;  // ranks chunk*64 .. chunk*64+63
    Id rest;              // the lower chunks
    bool operator==(const Cell&) const = default;
  };

  static std::uint64_t hash(const Cell& c) {
    return mix64(((static_cast<std::uint64_t>(c.chunk) << 32) | c.rest) ^ mix64(c.bits));
  }

  // The id of the one cell equal to `cell`, made if it does not exist yet.
  Id cons(const Cell& cell) {
    if (!slots_.empty()) {
      const std::size_t mask = slots_.size() - 1;
      for (std::size_t s = hash(cell) & mask; slots_[s] != kFree; s = (s + 1) & mask) {
        if (cells_[slots_[s]] == cell) return slots_[s];
      }
    }
    if (!grow()) return kNoMemory;
    auto id = static_cast<Id>(cells_.size());
    cells_.push_back(cell);
    place(id);
    return id;
  }

  // Room for one more cell, with the index at most half full.
  bool grow() {
    if (cells_.size() >= kNoMemory - 1) return false;  // ids would run out
    if (cells_.size() == cells_.capacity()) {
      std::size_t cap = std::max<std::size_t>(256, cells_.capacity() * 2);
      if (!charge_.add((cap - cells_.capacity()) * sizeof(Cell))) return false;
      cells_.reserve(cap);
      if (cells_.empty()) cells_.push_back(Cell{0, 0, kEmpty});  // id 0: the empty set
    }
    if (2 * cells_.size() >= slots_.size()) {
      std::size_t size = std::max<std::size_t>(1024, slots_.size() * 2);
      if (!charge_.add((size - slots_.size()) * sizeof(Id))) return false;
      slots_.assign(size, kFree);
      for (Id id = 1; id < cells_.size(); ++id) place(id);
    }
    return true;
  }

  void place(Id id) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t s = hash(cells_[id]) & mask;
    while (slots_[s] != kFree) s = (s + 1) & mask;
    slots_[s] = id;
  }

  static constexpr Id kFree = 0xffffffffU;

  BudgetCharge charge_;
  std::vector<Cell> cells_;   // [0] stands for the empty set and is in no slot
  std::vector<Id> slots_;     // open addressing over cells_, by (rank, rest)
  std::vector<Cell> above_;  // scratch for insert()
};

}  // namespace fencecheck::linear
