// A stream of validated history events: the JSONL reader (history_reader.h) and the Jepsen
// EDN reader both implement it, so every checker works on either format.
//
// next() fills `out` and returns true, or returns false at the end. Malformed input throws
// InputError naming file, line and field. Not thread-safe; owns its file handle.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "platform/errors.h"

namespace fencecheck {

class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual bool next(Event& out) = 0;
  // Non-fatal problems seen so far, e.g. a truncated last line.
  virtual const std::vector<std::string>& warnings() const = 0;
};

}  // namespace fencecheck
