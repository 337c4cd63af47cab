// Small bookkeeping shared by the checkers: interned names (keys, nodes) and the invoke
// of each process's op in flight. Internal to checkers/; not thread-safe.
#pragma once

#include <cstdint>
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
  Invoke observe(const Event& e) {
    if (e.is_nemesis()) return {};
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

}  // namespace fencecheck
