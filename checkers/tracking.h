// Small bookkeeping shared by the checkers: interned names (keys, nodes), the invoke of
// each process's op in flight, and the time-order guard the pruning checkers rely on.
// Internal to checkers/; not thread-safe.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "checkers/history.h"

namespace fencecheck {

// Maps strings to dense ids so that per-op records stay small.
class Interner {
 public:
  std::uint32_t id(std::string_view s) {
    auto it = ids_.find(std::string(s));
    if (it != ids_.end()) return it->second;
    auto n = static_cast<std::uint32_t>(names_.size());
    names_.emplace_back(s);
    ids_.emplace(names_.back(), n);
    return n;
  }
  const std::string& name(std::uint32_t id) const { return names_[id]; }
  std::size_t size() const { return names_.size(); }

 private:
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<std::string> names_;
};

// The invoke of each process's op in flight; feed it every event in order.
class InFlightInvokes {
 public:
  struct Invoke {
    Nanos time = 0;
    std::uint64_t index = 0;
  };
  // Call with every event; returns the invoke that `e` completes (for completions).
  // Nemesis lines and notices complete nothing.
  Invoke observe(const Event& e) {
    if (e.is_nemesis() || e.is_notice()) return {};
    if (e.type == OpType::kInvoke) {
      open_[e.process] = {e.time, e.index};
      return open_[e.process];
    }
    auto it = open_.find(e.process);
    Invoke inv = it == open_.end() ? Invoke{e.time, e.index} : it->second;
    if (it != open_.end()) open_.erase(it);
    return inv;
  }

 private:
  std::unordered_map<std::int64_t, Invoke> open_;
};

// The readers reject a history whose times go backwards (HistoryValidator), so a checker
// may assume that no line still to come is earlier than the current one and forget what
// can no longer matter. A checker fed directly, bypassing the readers, calls check() on
// every event: a time going backwards then throws std::invalid_argument (the check
// pipeline turns that into an unknown verdict naming the line) instead of letting the
// pruning give a silently wrong answer.
class TimeOrderGuard {
 public:
  explicit TimeOrderGuard(const char* checker) : checker_(checker) {}
  // Returns e.time, the earliest time any later event may have.
  Nanos check(const Event& e) {
    if (seen_ && e.time < last_) {
      throw std::invalid_argument(
          "line " + std::to_string(e.line) + ": time " + std::to_string(e.time) + " ns is before " +
          std::to_string(last_) + " ns on an earlier line; the " + checker_ +
          " checker needs times non-decreasing in file order (docs/history.md)");
    }
    seen_ = true;
    last_ = e.time;
    return last_;
  }

 private:
  const char* checker_;
  bool seen_ = false;
  Nanos last_ = 0;
};

}  // namespace fencecheck
