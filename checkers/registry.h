// The names `fencecheck check --checkers` accepts, and how to make each checker.
// Adding a checker is one line in registry.cpp. The registry is immutable and thread-safe.
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
#include "options/option_spec.h"

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
