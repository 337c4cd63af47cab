// One pass of the chosen checkers over a history and its resource log: what
// `fencecheck check` and the end of `fencecheck run` both do.
//
// run_checks() reads each file once, streaming, and feeds every checker. It throws
// InputError for malformed input and std::invalid_argument for an unknown checker name.
// A checker that throws (std::bad_alloc included) is dropped from the pass and reported
// `unknown` ("the <name> checker failed: <what>"); the others carry on (Jepsen's
// check-safe). Thread-compatible: separate calls share nothing.
#pragma once

#include <memory>
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
  // Why the whole run cannot be called valid, beyond the checkers' own verdicts: e.g. the
  // history has no client operation, or (added by the controller) the run was cut short.
  // Any reason makes a run that no checker found invalid `unknown`.
  std::vector<std::string> unknown_reasons;
  std::vector<std::string> warnings;
  std::uint64_t events = 0;
  std::uint64_t client_events = 0;  // events of client processes (not the nemesis)
  std::uint64_t resource_entries = 0;
  double seconds = 0;

  // invalid if any checker is invalid; else unknown if any checker is unknown or there is
  // an unknown reason; else valid (skipped counts as valid).
  Verdict overall() const;
  int exit_code() const;  // 0 valid, 1 invalid, 2 unknown
  // {"valid", "checkers", "unknown_reasons", "history", "resource_log", "warnings", …}
  nlohmann::json to_json(const CheckRequest& request) const;
  // One line per checker with the first violation of each invalid one as a sentence, then
  // "undecided: <reason>" per unknown reason and "warning: <text>" per warning.
  std::string summary() const;
};

CheckReport run_checks(const CheckRequest& request);

// A checker instance and the name its result is reported under.
struct NamedChecker {
  std::string name;
  std::unique_ptr<Checker> checker;
};
// The same pass over the given checkers instead of those request.checkers names
// (request.checkers and request.options are not used): for tests and for callers that
// build their own checkers.
CheckReport run_checks(const CheckRequest& request, std::vector<NamedChecker> checkers);

}  // namespace fencecheck
