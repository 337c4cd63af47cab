// The timeline of a run as the report draws it, built in one pass over the history (and
// the resource log): client ops (each invoke paired with its completion), lock holds,
// fault windows and instant nemesis lines.
//
//  - A hold follows docs/checkers.md's exclusion rule: from an acquire's ok completion to the
//    holder's next release invoke of that key, else to the invoke of the op whose `info`
//    completion retired it, else to the last line of the history.
//  - A fault window is a nemesis start line (pause, partition, clock-bump, clock-strobe,
//    kill) paired with the next end line (resume, heal, clock-reset, start) naming the same
//    `fault` in its value; a window still open at the end runs to the end. Other nemesis
//    lines (arm, restart, anything unknown) are instants.
//
// Values are kept as bounded text (checkers/bounded.h), so memory is O(events) with a small
// constant. Malformed input throws InputError from the readers. Not thread-safe while
// building; the result is a plain value.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "checkers/event_source.h"
#include "checkers/history_reader.h"
#include "checkers/resource_log.h"

namespace fencecheck::report {

struct TimelineOp {
  std::int64_t process = 0;
  OpFn f = OpFn::kAcquire;
  std::optional<OpType> outcome;  // ok / fail / info; nullopt: never completed
  Nanos invoke = 0, complete = -1;  // complete: -1 when it never completed
  std::uint64_t invoke_index = 0, complete_index = 0;
  std::string key, node, value, error;  // value: the completion's, else the invoke's
};

struct Hold {
  std::int64_t process = 0;
  std::string key, node;
  Nanos start = 0, end = 0;
  std::string ended_by;  // "release", "retired" or "end-of-history"
  std::uint64_t acquire_index = 0;  // the acquire's ok completion
  std::optional<Token> token;
};

struct FaultWindow {
  std::string fault;     // the value's "fault", e.g. "pause-holder"
  std::string began_by;  // the start line's f, e.g. "pause"
  std::string ended_by;  // the end line's f; empty when open at the end
  Nanos start = 0, end = 0;
  bool open_at_end = false;
  std::string targets;  // "c3", or "n1, n2": the nodes it names
  std::string value;    // the start line's value, bounded
  std::uint64_t start_index = 0;
  std::optional<std::uint64_t> end_index;
};

struct NemesisMark {
  Nanos time = 0;
  std::string f, value;
  std::uint64_t index = 0;
};

// A notice line: the lock library told a process something (`lost`) about a key.
struct Notice {
  Nanos time = 0;
  std::int64_t process = 0;
  OpFn f = OpFn::kLost;
  std::string key, node;
};

struct OkCompletion {
  Nanos time = 0;
  OpFn f = OpFn::kAcquire;
};

struct Timeline {
  std::vector<TimelineOp> ops;  // in invoke order
  std::vector<Hold> holds;      // in start order
  std::vector<FaultWindow> faults;  // in start order
  std::vector<NemesisMark> marks;
  std::vector<Notice> notices;  // in time order
  std::vector<ResourceEntry> resource;  // file order
  std::vector<OkCompletion> oks;        // every ok client completion, in time order
  std::vector<Nanos> event_times;       // the time of history line `index`
  Nanos end_time = 0;                   // time of the last line
  std::vector<std::string> warnings;    // the readers'
};

// `resource` may be null (no resource.jsonl).
Timeline build_timeline(EventSource& history, ResourceLogReader* resource);
// The timeline of a run directory: its history.jsonl, and its resource.jsonl when there is one.
Timeline read_timeline(const std::filesystem::path& run_dir);

}  // namespace fencecheck::report
