// The names `fencecheck check --checkers` accepts, and how to make each checker.
// Adding a checker is one line in registry.cpp. The registry is immutable and thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker.h"

namespace fencecheck {

struct CheckerInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Checker>(const CheckOptions&)> make;
};

const std::vector<CheckerInfo>& checker_registry();
// nullptr when no checker has that name.
const CheckerInfo* find_checker(std::string_view name);
// "exclusion, tokens, resource, …" for error messages.
std::string checker_names();

}  // namespace fencecheck
