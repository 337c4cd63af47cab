// The names `fencecheck check --checkers` accepts, how to make each checker, and the ops
// each one judges, from which the checkers of a workload follow (checkers_for). Adding a
// checker is one entry in registry.cpp. The registry is immutable and thread-safe; no call
// blocks.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker.h"
#include "ops/ops.h"

namespace fencecheck {

struct CheckerInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Checker>(const CheckOptions&)> make;
  // Whether it judges the events of op f; a workload that issues such an op is judged by it.
  bool (*judges)(OpFn f) = nullptr;
};

const std::vector<CheckerInfo>& checker_registry();
// nullptr when no checker has that name.
const CheckerInfo* find_checker(std::string_view name);
// "exclusion, tokens, resource, …" for error messages.
std::string checker_names();
// The checkers that judge a workload issuing `ops`: those judging any of them, in registry
// order. For lock (acquire, release): exclusion, tokens, linearizable.
std::vector<std::string> checkers_for(const std::vector<OpFn>& ops);

}  // namespace fencecheck
