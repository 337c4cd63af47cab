// One pass of the chosen checkers over a history and its resource log: what
// `fencecheck check` and the end of `fencecheck run` both do.
//
// run_checks() reads each file once, streaming, and feeds every checker. It throws
// InputError for malformed input and std::invalid_argument for an unknown checker name.
// Thread-compatible: separate calls share nothing.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/checker.h"

namespace fencecheck {

struct CheckRequest {
  std::string history;                  // history file
  std::string format = "jsonl";         // "jsonl" or "edn"
  std::optional<std::string> resource;  // resource.jsonl, if any
  std::vector<std::string> checkers;    // empty: every registered checker
  CheckOptions options;
};

struct CheckReport {
  std::vector<std::pair<std::string, CheckResult>> results;  // in registry order
  std::vector<std::string> warnings;
  std::uint64_t events = 0;
  std::uint64_t resource_entries = 0;
  double seconds = 0;

  Verdict overall() const;  // invalid > unknown > valid (skipped counts as valid)
  int exit_code() const;    // 0 valid, 1 invalid, 2 unknown
  nlohmann::json to_json(const CheckRequest& request) const;
  // One line per checker, then the first violation of each invalid one as a sentence.
  std::string summary() const;
};

CheckReport run_checks(const CheckRequest& request);

}  // namespace fencecheck
