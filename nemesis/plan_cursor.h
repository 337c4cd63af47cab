// PlanCursor: where a running plan (plan.h) is — which step comes next, what is in force
// (PlanState) — and the nemesis lines its steps turn into (each action's fire and undo,
// plan_actions.h).
//
// Steps go strictly in order. due() hands out what time has made due (a step's at_ms or
// after_ms, a for_ms undo), on_event() what a lock event fires (the step waiting for it and
// the steps right after it with no delay). A batch handed out must be reported applied()
// before the next is handed out, so two threads never apply steps out of order, and
// after_ms counts from the end of the previous step's action (an undo is not a step). A
// lock event that comes while a batch is out is kept, in order, with the instant it came:
// applied() fires the step it was waiting for then (planned at the event's instant, not at
// the late moment it is applied), and returns those lines for the same caller to apply;
// events after it wait for that batch's applied() in turn. "holder" becomes the client of
// the last lock event a step fired on.
//
// Pure: no clock of its own (instants are passed in), no thread. Thread-safe: one mutex,
// never held by a caller while it applies a batch.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "nemesis/plan.h"
#include "nemesis/plan_actions.h"
#include "platform/time_source.h"

namespace fencecheck {

class PlanCursor {
 public:
  // start: when the test phase began (at_ms counts from it).
  PlanCursor(Plan plan, TimeSource::Instant start);

  std::vector<PlannedLine> due(TimeSource::Instant now);
  std::vector<PlannedLine> on_event(const LockEvent& e, TimeSource::Instant now);
  // The batch handed out was applied at `now`. Returns what lock events that came in the
  // meantime fired (empty: nothing more to apply); that is a batch too.
  std::vector<PlannedLine> applied(TimeSource::Instant now);
  // The next step waits for a lock event (a cheap check for the clients' hooks).
  bool waiting_for_event() const;
  // How many steps have fired, of how many.
  std::size_t steps_fired() const;
  std::size_t steps() const { return plan_.steps.size(); }
  // "plan: step 3 of 7 (cut) waits for acquire-ok by c1"; empty once every step fired.
  std::string describe() const;

 private:
  struct Undo {
    TimeSource::Instant at;
    std::size_t step;
  };
  bool step_due_locked(const PlanStep& s, TimeSource::Instant now, TimeSource::Instant* planned) const;
  void fire_locked(const PlanStep& s, TimeSource::Instant now, PlanInstant planned, std::vector<PlannedLine>& out);
  bool event_fires_locked(const LockEvent& e, TimeSource::Instant now, std::vector<PlannedLine>& out);
  void chain_locked(TimeSource::Instant now, std::vector<PlannedLine>& out);
  std::vector<PlannedLine> hand_out_locked(std::vector<PlannedLine> out);

  mutable std::mutex mu_;
  Plan plan_;
  TimeSource::Instant start_;
  std::size_t next_ = 0;              // index of the next step
  TimeSource::Instant last_applied_;  // end of the previous step's action
  bool busy_ = false;                 // a batch is out, not yet applied()
  bool batch_has_step_ = false;       // it holds a step, not only undos
  std::vector<LockEvent> early_;      // lock events while a batch was out (at most 64)
  PlanState state_;
  std::vector<Undo> undos_;           // for_ms ends not yet done
};

}  // namespace fencecheck
