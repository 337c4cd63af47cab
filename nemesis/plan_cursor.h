// PlanCursor: where a running plan (plan.h) is — which step comes next, what is in force —
// and the nemesis lines its steps turn into, in the vocabulary each family's
// Nemesis::replay() reads (so that applying a step is exactly applying a recorded line).
//
// Steps go strictly in order. due() hands out what time has made due (a step's at_ms or
// after_ms, a for_ms undo), on_event() what a lock event fires (the step waiting for it and
// the steps right after it with no delay). A batch handed out must be reported applied()
// before the next is handed out: until then due() and on_event() return nothing, so two
// threads never apply steps out of order, and after_ms counts from the end of the previous
// step's action. A cut adds to the cuts in force (the line carries the whole grudge, both
// ways); its for_ms undo removes just its links. A clock step sets offsets (the line carries
// the deltas from the offsets in force); its undo sets them back. "holder" becomes the
// client of the last lock event a step fired on.
//
// Pure: no clock of its own (instants are passed in), no thread. Thread-safe: one mutex,
// never held by a caller while it applies a batch.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nemesis/plan.h"
#include "platform/runtime.h"
#include "platform/time_source.h"

namespace fencecheck {

struct PlannedLine {
  std::string f;
  nlohmann::json value;  // has "fault"
  std::optional<TimeSource::Instant> planned;  // when it was due: an event's step, the event's instant
  std::size_t step = 0;                        // the plan step it comes from
};

class PlanCursor {
 public:
  // start: when the test phase began (at_ms counts from it).
  PlanCursor(Plan plan, TimeSource::Instant start);

  std::vector<PlannedLine> due(TimeSource::Instant now);
  std::vector<PlannedLine> on_event(const LockEvent& e, TimeSource::Instant now);
  void applied(TimeSource::Instant now);
  // The next step waits for a lock event (a cheap check for the clients' hooks).
  bool waiting_for_event() const;
  // "plan: step 3 of 7 (cut) waits for acquire-ok by c1"; empty once every step is applied.
  std::string describe() const;

 private:
  struct Undo {
    TimeSource::Instant at;
    std::size_t step;
  };
  bool step_due_locked(const PlanStep& s, TimeSource::Instant now, TimeSource::Instant* planned) const;
  void fire_locked(const PlanStep& s, TimeSource::Instant now, std::optional<TimeSource::Instant> planned,
                   std::vector<PlannedLine>& out);
  void undo_locked(const Undo& u, std::vector<PlannedLine>& out);
  void chain_locked(TimeSource::Instant now, std::vector<PlannedLine>& out);
  nlohmann::json bound(const nlohmann::json& j) const;  // "holder" replaced
  std::string bound(const std::string& node) const;
  void cut_lines_locked(std::size_t step, std::optional<TimeSource::Instant> planned, std::vector<PlannedLine>& out);
  void clock_line_locked(const std::map<std::string, std::int64_t>& targets, std::size_t step,
                         std::optional<TimeSource::Instant> planned, std::vector<PlannedLine>& out);

  mutable std::mutex mu_;
  Plan plan_;
  TimeSource::Instant start_;
  std::size_t next_ = 0;                 // index of the next step
  TimeSource::Instant last_applied_;     // end of the previous step's action
  bool busy_ = false;                    // a batch is out, not yet applied()
  bool batch_has_step_ = false;          // it holds a step, not only undos
  std::string holder_;                   // client of the last event fired on
  std::map<std::size_t, Grudge> cuts_;   // by step number: the cuts in force
  std::map<std::string, std::int64_t> offsets_;  // node → ms, what the plan set
  std::map<std::size_t, std::map<std::string, std::int64_t>> before_;  // clock step → offsets it replaced
  std::vector<Undo> undos_;              // for_ms ends not yet done
};

}  // namespace fencecheck
