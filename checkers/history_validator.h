// The ordering rules every history must follow (docs/history.md), checked one
// event at a time so that any reader (JSONL, EDN) can share them: index in file order,
// time non-decreasing, at most one op in flight per process, a completion only after an
// invoke of the same f and key, nemesis lines of type info, a retired process never again.
//
// check() throws InputError naming the file, the event's line and the field at fault.
// Memory: one entry per process with an op in flight, plus the set of retired processes.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "checkers/event_source.h"
#include "checkers/history.h"

namespace fencecheck {

class HistoryValidator {
 public:
  explicit HistoryValidator(std::string file) : file_(std::move(file)) {}
  void check(const Event& e);

 private:
  struct InFlight {
    OpFn f;
    std::string key;
    std::size_t line;
  };
  std::string file_;
  std::uint64_t next_index_ = 0;
  Nanos last_time_ = 0;
  std::unordered_map<std::int64_t, InFlight> in_flight_;
  std::unordered_map<std::int64_t, std::size_t> retired_;  // process -> line it retired
};

}  // namespace fencecheck
