// Streaming readers of the two JSONL files of a run (docs/history.md):
// history.jsonl → Event, resource.jsonl → ResourceEntry. One line in memory at a time.
//
// Every field is validated: bad JSON, a missing or mistyped field, an unknown `type` or
// client `f`, a `value` not of the shape the op's declaration (ops/ops.h) gives that
// outcome, and the ordering rules of HistoryValidator all throw InputError naming file,
// line and field. A last line with no newline that does not parse is the mark of a writer
// killed mid-line: it is skipped with a warning and the prefix stands. Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "checkers/event_source.h"
#include "checkers/resource_log.h"

namespace fencecheck {

class HistoryReader : public EventSource {
 public:
  explicit HistoryReader(const std::string& path);  // InputError: unreadable or not a regular file
  ~HistoryReader() override;
  bool next(Event& out) override;
  const std::vector<std::string>& warnings() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ResourceLogReader {
 public:
  explicit ResourceLogReader(const std::string& path);  // InputError: unreadable or not a regular file
  ~ResourceLogReader();
  bool next(ResourceEntry& out);
  const std::vector<std::string>& warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck
