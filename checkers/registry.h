// The names `fencecheck check --checkers` accepts, how to make each checker, and the ops
// each one judges, from which the checkers of a workload follow (checkers_for). Adding a
// checker is one entry in registry.cpp. The registry is immutable and thread-safe; no call
// blocks.
//
// The checkers' options (--model, --linear-time-limit, --linear-memory-limit) are declared
// once here, for `check` and `run` alike (harness/option_schema.h makes the flags);
// check_options() turns the values given into the CheckOptions the checkers read.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker.h"
#include "ops/ops.h"
#include "options/option_spec.h"

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

// One checker option: its declaration, and where its value goes in CheckOptions.
struct CheckerOption {
  OptionSpec spec;
  std::function<void(const nlohmann::json& value, CheckOptions& into)> apply;
};
const std::vector<CheckerOption>& checker_options();
std::vector<OptionSpec> checker_option_specs();
// `base` with every checker option that has a value in `values` applied.
CheckOptions check_options(const OptionValues& values, CheckOptions base = {});

}  // namespace fencecheck
