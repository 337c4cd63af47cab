// Lookups shared by every registry (checkers, backends, workloads, faults): each is a
// vector of Info structs with a `name` field, built once and immutable. Header-only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fencecheck {

// The entry called `name`, or nullptr.
template <class Info>
const Info* find_by_name(const std::vector<Info>& registry, std::string_view name) {
  for (const Info& info : registry) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

// "a, b, c": the names in registry order, for error messages and --help.
template <class Info>
std::string names_of(const std::vector<Info>& registry) {
  std::string s;
  for (const Info& info : registry) s += (s.empty() ? "" : ", ") + info.name;
  return s;
}

}  // namespace fencecheck
