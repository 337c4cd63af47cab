#include "nemesis/plan_cursor.h"

#include <algorithm>

#include "nemesis/grudges.h"

namespace fencecheck {

using Instant = TimeSource::Instant;

PlanCursor::PlanCursor(Plan plan, Instant start) : plan_(std::move(plan)), start_(start), last_applied_(start) {}

std::string PlanCursor::bound(const std::string& node) const { return node == kPlanHolder ? holder_ : node; }

nlohmann::json PlanCursor::bound(const nlohmann::json& j) const {
  if (j.is_string()) return bound(j.get<std::string>());
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : j) out.push_back(bound(x));
    return out;
  }
  return j;
}

bool PlanCursor::step_due_locked(const PlanStep& s, Instant now, Instant* planned) const {
  if (s.trigger == PlanTrigger::kOnEvent) return false;
  Instant at = s.trigger == PlanTrigger::kAt ? std::max(start_ + s.delay, last_applied_) : last_applied_ + s.delay;
  *planned = at;
  return at <= now;
}

void PlanCursor::cut_lines_locked(std::size_t step, std::optional<Instant> planned, std::vector<PlannedLine>& out) {
  Grudge all;
  for (const auto& [n, g] : cuts_) {
    for (const auto& [node, drops] : g) all[node].insert(drops.begin(), drops.end());
  }
  if (all.empty()) {
    out.push_back({"heal", {{"fault", "partition-nodes"}}, planned, step});
  } else {
    out.push_back({"partition", {{"fault", "partition-nodes"}, {"grudge", grudge_to_json(all)}}, planned, step});
  }
}

void PlanCursor::clock_line_locked(const std::map<std::string, std::int64_t>& targets, std::size_t step,
                                   std::optional<Instant> planned, std::vector<PlannedLine>& out) {
  nlohmann::json deltas = nlohmann::json::object();
  for (const auto& [node, ms] : targets) {
    const std::int64_t now = offsets_.contains(node) ? offsets_[node] : 0;
    if (ms != now) deltas[node] = ms - now;
    offsets_[node] = ms;
  }
  if (!deltas.empty()) out.push_back({"clock-bump", {{"fault", "clock-bump"}, {"deltas", deltas}}, planned, step});
}

void PlanCursor::fire_locked(const PlanStep& s, Instant now, std::optional<Instant> planned,
                             std::vector<PlannedLine>& out) {
  const nlohmann::json& p = s.params;
  if (s.for_ms && s.action != "pause" && s.action != "kill") undos_.push_back({now + *s.for_ms, s.number});
  if (s.action == "cut") {
    Grudge g;
    for (const auto& [node, from] : p.at("grudge").items()) {
      for (const auto& other : from) {
        const std::string a = bound(node), b = bound(other.get<std::string>());
        g[a].insert(b);
        g[b].insert(a);  // both ways
      }
    }
    cuts_[s.number] = g;
    cut_lines_locked(s.number, planned, out);
  } else if (s.action == "heal-cut") {
    cuts_.clear();
    out.push_back({"heal", {{"fault", "partition-nodes"}}, planned, s.number});
  } else if (s.action == "clock") {
    std::map<std::string, std::int64_t> targets, before;
    for (const auto& [node, ms] : p.at("offsets").items()) {
      targets[node] = ms.get<std::int64_t>();
      before[node] = offsets_.contains(node) ? offsets_[node] : 0;
    }
    before_[s.number] = before;
    clock_line_locked(targets, s.number, planned, out);
  } else if (s.action == "clock-reset") {
    offsets_.clear();
    before_.clear();
    out.push_back({"clock-reset", {{"fault", "clock-reset"}}, planned, s.number});
  } else if (s.action == "pause") {
    out.push_back({"pause",
                   {{"fault", s.fault}, {"targets", {bound(p.at("node").get<std::string>())}}, {"ms", s.for_ms->count()}},
                   planned, s.number});
  } else if (s.action == "kill") {
    out.push_back({"kill",
                   {{"fault", s.fault}, {"targets", bound(p.at("nodes"))}, {"restart_ms", s.for_ms ? s.for_ms->count() : 0}},
                   planned, s.number});
  } else if (s.action == "replay") {
    out.push_back({p.at("f").get<std::string>(), p.at("value"), planned, s.number});
  } else if (s.action == "restart") {
    out.push_back({"restart", {{"fault", s.fault}, {"targets", p.at("nodes")}}, planned, s.number});
  }
}

void PlanCursor::undo_locked(const Undo& u, std::vector<PlannedLine>& out) {
  const PlanStep& s = plan_.steps[u.step - 1];
  if (s.action == "cut") {
    if (cuts_.erase(u.step) > 0) cut_lines_locked(u.step, u.at, out);  // a heal-cut may have ended it
  } else if (s.action == "clock") {
    auto it = before_.find(u.step);
    if (it == before_.end()) return;  // a clock-reset came first
    const auto before = it->second;
    before_.erase(it);
    clock_line_locked(before, u.step, u.at, out);
  }
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
      undo_locked(u, out);
    } else if (step_due) {
      fire_locked(plan_.steps[next_++], now, step_at, out);
      last_applied_ = now;  // the next after_ms counts from the end of this batch, see applied()
      batch_has_step_ = true;
    } else {
      return;
    }
  }
}

std::vector<PlannedLine> PlanCursor::due(Instant now) {
  std::lock_guard lock(mu_);
  std::vector<PlannedLine> out;
  if (busy_) return out;
  chain_locked(now, out);
  busy_ = !out.empty();
  return out;
}

std::vector<PlannedLine> PlanCursor::on_event(const LockEvent& e, Instant now) {
  std::lock_guard lock(mu_);
  std::vector<PlannedLine> out;
  if (busy_ || next_ >= plan_.steps.size()) return out;
  const PlanStep& s = plan_.steps[next_];
  if (s.trigger != PlanTrigger::kOnEvent || s.event != e.kind) return out;
  if (s.client != kPlanHolder && s.client != e.client) return out;
  if (s.key && *s.key != e.key) return out;
  holder_ = e.client;
  ++next_;
  batch_has_step_ = true;
  fire_locked(s, now, now, out);  // due the instant its event came
  last_applied_ = now;
  chain_locked(now, out);  // the steps right after it with no delay
  busy_ = !out.empty();
  return out;
}

void PlanCursor::applied(Instant now) {
  std::lock_guard lock(mu_);
  busy_ = false;
  if (batch_has_step_) last_applied_ = std::max(last_applied_, now);  // an undo is not a step
  batch_has_step_ = false;
}

bool PlanCursor::waiting_for_event() const {
  std::lock_guard lock(mu_);
  return !busy_ && next_ < plan_.steps.size() && plan_.steps[next_].trigger == PlanTrigger::kOnEvent;
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
