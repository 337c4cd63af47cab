// The Checker role: reads a history (and the resource log) once, in order, and says
// whether one safety rule held (docs/checkers.md).
//
// A Checker is fed every history event in file order through observe(), then every
// resource.jsonl entry through observe_resource(), then finish() is called exactly once.
// Events are already validated by the reader: in particular times never go backwards in
// file order, which lets a checker forget what no later event can change (safety.h says
// what each quick checker keeps). A Checker is used by one thread at a time;
// it may start its own threads inside finish(). It must keep memory proportional to the
// state its rule needs, not to the history (10 million events must fit in well under 2 GB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "checkers/history.h"
#include "checkers/resource_log.h"

namespace fencecheck {

enum class Verdict { kValid, kInvalid, kUnknown, kSkipped };
std::string_view to_string(Verdict v);  // "valid", "invalid", "unknown", "skipped"

struct CheckResult {
  Verdict verdict = Verdict::kValid;
  std::uint64_t count = 0;                            // number of violations found
  // How `count` reads in the summary line when the checker counts something other than
  // plain violations, e.g. exclusion's "4 holds overlapped by 128 acquires"; empty: "N
  // violations".
  std::string count_text;
  nlohmann::json violations = nlohmann::json::array();  // the first few, with the ops
  // One plain sentence: the first violation, or why the checker skipped / could not decide.
  std::string summary;
  nlohmann::json stats = nlohmann::json::object();  // anything else that helps a reader
  // When the earliest violation kept happened (history time), e.g. when the second holder
  // acquired; unset without violations. The suite's "time to first violation".
  std::optional<Nanos> first_violation_at;

  // {"valid": true|false|"unknown"|"skipped", "count", "shown" (violations kept, at most
  //  count), "violations", "summary", "count_text" and "first_violation_s" (when set),
  //  ...stats}
  nlohmann::json to_json() const;
};

struct CheckOptions {
  std::size_t max_violations = 10;  // how many violations to keep in detail
  std::string model;                // linearizable: model name, empty = choose from history
  double time_limit_s = 60;         // linearizable: search budget
  std::size_t memory_limit_bytes = std::size_t{1} << 30;
};

class Checker {
 public:
  virtual ~Checker() = default;
  virtual void observe(const Event& e) = 0;
  virtual void observe_resource(const ResourceEntry&) {}
  virtual CheckResult finish() = 0;
};

}  // namespace fencecheck
