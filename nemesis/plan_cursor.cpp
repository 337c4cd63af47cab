#include "nemesis/plan_cursor.h"

#include <algorithm>

namespace fencecheck {

using Instant = TimeSource::Instant;

PlanCursor::PlanCursor(Plan plan, Instant start) : plan_(std::move(plan)), start_(start), last_applied_(start) {}

bool PlanCursor::step_due_locked(const PlanStep& s, Instant now, Instant* planned) const {
  if (s.trigger == PlanTrigger::kOnEvent) return false;
  Instant at = s.trigger == PlanTrigger::kAt ? std::max(start_ + s.delay, last_applied_) : last_applied_ + s.delay;
  *planned = at;
  return at <= now;
}

void PlanCursor::fire_locked(const PlanStep& s, Instant now, PlanInstant planned, std::vector<PlannedLine>& out) {
  const PlanActionInfo& action = *find_plan_action(s.action);  // read_plan() checked the name
  if (s.for_ms && action.for_ms == PlanActionInfo::ForMs::kUndo) undos_.push_back({now + *s.for_ms, s.number});
  action.fire(s, state_, planned, out);
  last_applied_ = now;  // the next after_ms counts from the end of this batch: applied()
  batch_has_step_ = true;
}

void PlanCursor::chain_locked(Instant now, std::vector<PlannedLine>& out) {
  for (;;) {
    // The undos and the next step due by now, earliest first.
    auto undo = std::min_element(undos_.begin(), undos_.end(), [](const Undo& a, const Undo& b) { return a.at < b.at; });
    Instant step_at{};
    const bool step_due = next_ < plan_.steps.size() && step_due_locked(plan_.steps[next_], now, &step_at);
    const bool undo_due = undo != undos_.end() && undo->at <= now;
    if (undo_due && (!step_due || undo->at <= step_at)) {
      const Undo u = *undo;
      undos_.erase(undo);
      const PlanStep& s = plan_.steps[u.step - 1];
      find_plan_action(s.action)->undo(s, state_, u.at, out);
    } else if (step_due) {
      fire_locked(plan_.steps[next_++], now, step_at, out);
    } else {
      return;
    }
  }
}

bool PlanCursor::event_fires_locked(const LockEvent& e, Instant now, std::vector<PlannedLine>& out) {
  if (next_ >= plan_.steps.size()) return false;
  const PlanStep& s = plan_.steps[next_];
  if (s.trigger != PlanTrigger::kOnEvent || s.event != e.kind) return false;
  if (s.client != kPlanHolder && s.client != e.client) return false;
  if (s.key && *s.key != e.key) return false;
  state_.holder = e.client;
  ++next_;
  fire_locked(s, now, e.at, out);  // due the instant its event came, however late it is applied
  chain_locked(now, out);         // the steps right after it with no delay
  return true;
}

std::vector<PlannedLine> PlanCursor::hand_out_locked(std::vector<PlannedLine> out) {
  busy_ = !out.empty();
  if (!busy_) batch_has_step_ = false;  // a step that made no line (an offset already set)
  return out;
}

std::vector<PlannedLine> PlanCursor::due(Instant now) {
  std::lock_guard lock(mu_);
  if (busy_) return {};
  std::vector<PlannedLine> out;
  chain_locked(now, out);
  return hand_out_locked(std::move(out));
}

std::vector<PlannedLine> PlanCursor::on_event(const LockEvent& e, Instant now) {
  std::lock_guard lock(mu_);
  if (busy_) {
    if (early_.size() < 64) early_.push_back(e);  // fired by applied(), in order
    return {};
  }
  std::vector<PlannedLine> out;
  event_fires_locked(e, now, out);
  return hand_out_locked(std::move(out));
}

std::vector<PlannedLine> PlanCursor::applied(Instant now) {
  std::lock_guard lock(mu_);
  busy_ = false;
  if (batch_has_step_) last_applied_ = std::max(last_applied_, now);  // an undo is not a step
  batch_has_step_ = false;
  std::vector<PlannedLine> out;
  // In the order they came; once one fires a step, the rest wait for that batch to be
  // applied in turn (the next applied()), so none is lost.
  while (!early_.empty() && out.empty()) {
    const LockEvent e = early_.front();
    early_.erase(early_.begin());
    event_fires_locked(e, now, out);
  }
  return hand_out_locked(std::move(out));
}

bool PlanCursor::waiting_for_event() const {
  std::lock_guard lock(mu_);
  return next_ < plan_.steps.size() && plan_.steps[next_].trigger == PlanTrigger::kOnEvent;
}

std::size_t PlanCursor::steps_fired() const {
  std::lock_guard lock(mu_);
  return next_;
}

std::string PlanCursor::describe() const {
  std::lock_guard lock(mu_);
  if (next_ >= plan_.steps.size()) return "";
  const PlanStep& s = plan_.steps[next_];
  std::string what = "plan: step " + std::to_string(s.number) + " of " + std::to_string(plan_.steps.size());
  if (s.trigger != PlanTrigger::kOnEvent) return what + " (" + s.action + ") next";
  return what + " (" + s.action + ") waits for " + std::string(to_string(s.event)) + " by " +
         (s.client == kPlanHolder ? std::string("any client") : s.client) + (s.key ? " on " + *s.key : "");
}

}  // namespace fencecheck
