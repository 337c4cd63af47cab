#include "nemesis/plan_actions.h"

#include <algorithm>

#include "nemesis/grudges.h"
#include "nemesis/fault_registry.h"
#include "nemesis/replay_check.h"
#include "platform/errors.h"
#include "platform/named_registry.h"

namespace fencecheck {

// ---- reading -------------------------------------------------------------------------

void PlanStepReader::fail(const std::string& field, const std::string& what) const {
  throw InputError(file_, step.line, field, "step " + std::to_string(step.number) + ": " + what);
}

std::int64_t PlanStepReader::ms(const char* field) const {
  static constexpr std::int64_t kDay = 86'400'000;
  const nlohmann::json& v = j_.at(field);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > kDay) {
    fail(field, "must be a whole number of ms from 0 to 86400000 (a day), not " + v.dump());
  }
  return v.get<std::int64_t>();
}

std::string PlanStepReader::text(const char* field) const {
  const nlohmann::json& v = at(field);
  if (!v.is_string()) fail(field, "must be a string, not " + v.dump());
  return v.get<std::string>();
}

const nlohmann::json& PlanStepReader::at(const char* field) const {
  if (!j_.contains(field)) fail(field, "is missing (action \"" + step.action + "\" needs it)");
  return j_.at(field);
}

std::vector<std::string> PlanStepReader::names(const char* field) const {
  const nlohmann::json& v = at(field);
  if (!v.is_array() || v.empty()) fail(field, "must be a non-empty list of node names, not " + v.dump());
  std::vector<std::string> out;
  for (const auto& n : v) {
    if (!n.is_string()) fail(field, "must list node names, not " + n.dump());
    out.push_back(n.get<std::string>());
  }
  return out;
}

bool PlanStepReader::is_server(const std::string& n) const {
  return std::find(servers_.begin(), servers_.end(), n) != servers_.end();
}

bool PlanStepReader::is_client(const std::string& n) const {
  return n == kPlanHolder || std::find(clients_.begin(), clients_.end(), n) != clients_.end();
}

void PlanStepReader::node(const char* field, const std::string& n, bool servers_only, bool holder_ok) const {
  if (n == kPlanHolder) {
    if (!holder_ok || servers_only) fail(field, "cannot name \"holder\" here: name the node");
    if (!so_far.saw_event) fail(field, "names \"holder\", but no step before it waits for a lock event");
    return;
  }
  if (servers_only ? is_server(n) : (is_server(n) || is_client(n))) return;
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("none") : s;
  };
  fail(field, "node \"" + n + "\" is not a " + (servers_only ? "server" : "server or client") + " of this run (servers: " +
                  list(servers_) + (servers_only ? "" : "; clients: " + list(clients_)) + ")");
}

nlohmann::json PlanState::bound(const nlohmann::json& j) const {
  if (j.is_string()) return bound(j.get<std::string>());
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : j) out.push_back(bound(x));
    return out;
  }
  return j;
}

namespace {

// ---- the lines the state in force makes ----------------------------------------------

// The union of the cuts in force as one partition line, or a heal when there is none.
void cut_line(std::size_t step, PlanState& state, PlanInstant planned, std::vector<PlannedLine>& out) {
  Grudge all;
  for (const auto& [n, g] : state.cuts) {
    for (const auto& [node, drops] : g) all[node].insert(drops.begin(), drops.end());
  }
  nlohmann::json value = {{"fault", "partition-nodes"}};
  if (!all.empty()) value["grudge"] = grudge_to_json(all);
  out.push_back({all.empty() ? "heal" : "partition", value, planned, step});
}

// Sets `targets`' offsets: one clock-bump line of the deltas from the offsets in force.
void clock_line(const std::map<std::string, std::int64_t>& targets, std::size_t step, PlanState& state,
                PlanInstant planned, std::vector<PlannedLine>& out) {
  nlohmann::json deltas = nlohmann::json::object();
  for (const auto& [node, ms] : targets) {
    std::int64_t& now = state.offsets[node];
    if (ms != now) deltas[node] = ms - now;
    now = ms;
  }
  if (!deltas.empty()) out.push_back({"clock-bump", {{"fault", "clock-bump"}, {"deltas", deltas}}, planned, step});
}

// ---- the actions ---------------------------------------------------------------------

void read_cut(PlanStepReader& r) {
  const nlohmann::json& g = r.at("grudge");
  if (!g.is_object() || g.empty()) r.fail("grudge", "must be an object: node → list of nodes it is cut from");
  for (const auto& [node, from] : g.items()) {
    r.node("grudge", node, false, true);
    if (!from.is_array() || from.empty()) r.fail("grudge", "\"" + node + "\" must map to a non-empty list of nodes");
    for (const auto& other : from) {
      if (!other.is_string()) r.fail("grudge", "\"" + node + "\" must list node names, not " + other.dump());
      r.node("grudge", other.get<std::string>(), false, true);
      if (other.get<std::string>() == node) r.fail("grudge", "\"" + node + "\" cannot be cut from itself");
    }
  }
  r.step.fault = "partition-nodes";
  r.so_far.cut = true;
}

void fire_cut(const PlanStep& s, PlanState& state, PlanInstant planned, std::vector<PlannedLine>& out) {
  Grudge g;
  for (const auto& [node, from] : s.params.at("grudge").items()) {
    for (const auto& other : from) {
      const std::string a = state.bound(node), b = state.bound(other.get<std::string>());
      g[a].insert(b);
      g[b].insert(a);  // both ways
    }
  }
  state.cuts[s.number] = g;
  cut_line(s.number, state, planned, out);
}

void undo_cut(const PlanStep& s, PlanState& state, PlanInstant at, std::vector<PlannedLine>& out) {
  if (state.cuts.erase(s.number) > 0) cut_line(s.number, state, at, out);  // unless a heal-cut ended it
}

void read_heal_cut(PlanStepReader& r) {
  if (!r.so_far.cut) r.fail("do", "heal-cut, but no cut comes before it since the last heal-cut");
  r.step.fault = "partition-nodes";
  r.so_far.cut = false;
}

void fire_heal_cut(const PlanStep& s, PlanState& state, PlanInstant planned, std::vector<PlannedLine>& out) {
  state.cuts.clear();
  cut_line(s.number, state, planned, out);  // no cut left: the heal line
}

void read_clock(PlanStepReader& r) {
  const nlohmann::json& o = r.at("offsets");
  if (!o.is_object() || o.empty()) r.fail("offsets", "must be an object: node → wall-clock offset in ms");
  for (const auto& [node, ms] : o.items()) {
    r.node("offsets", node, false, false);
    if (!ms.is_number_integer()) r.fail("offsets", "\"" + node + "\" must be a whole number of ms, not " + ms.dump());
  }
  r.step.fault = "clock-bump";
  r.so_far.shifted = true;
}

void fire_clock(const PlanStep& s, PlanState& state, PlanInstant planned, std::vector<PlannedLine>& out) {
  PlanState::ClockStep step;
  for (const auto& [node, ms] : s.params.at("offsets").items()) {
    step.set[node] = ms.get<std::int64_t>();
    step.before[node] = state.offsets[node];
  }
  if (s.for_ms) state.clock_steps[s.number] = step;
  clock_line(step.set, s.number, state, planned, out);
}

// Sets back the offsets this step set, on the nodes no later step has moved since.
void undo_clock(const PlanStep& s, PlanState& state, PlanInstant at, std::vector<PlannedLine>& out) {
  auto it = state.clock_steps.find(s.number);
  if (it == state.clock_steps.end()) return;  // a clock-reset came first
  std::map<std::string, std::int64_t> back;
  for (const auto& [node, ms] : it->second.set) {
    if (state.offsets[node] == ms) back[node] = it->second.before[node];
  }
  state.clock_steps.erase(it);
  clock_line(back, s.number, state, at, out);
}

void read_clock_reset(PlanStepReader& r) {
  if (!r.so_far.shifted) r.fail("do", "clock-reset, but no clock step comes before it since the last clock-reset");
  r.step.fault = "clock-reset";
  r.so_far.shifted = false;
}

void fire_clock_reset(const PlanStep& s, PlanState& state, PlanInstant planned, std::vector<PlannedLine>& out) {
  state.offsets.clear();
  state.clock_steps.clear();
  out.push_back({"clock-reset", {{"fault", "clock-reset"}}, planned, s.number});
}

void read_pause(PlanStepReader& r) {
  const std::string node = r.text("node");
  r.node("node", node, false, true);
  if (!r.step.for_ms) r.fail("for_ms", "is missing: a pause needs its length");
  r.step.fault = r.is_server(node) ? "pause-server" : "pause-client";
}

void fire_pause(const PlanStep& s, PlanState& state, PlanInstant planned, std::vector<PlannedLine>& out) {
  out.push_back({"pause",
                 {{"fault", s.fault}, {"targets", {state.bound(s.params.at("node").get<std::string>())}},
                  {"ms", s.for_ms->count()}},
                 planned, s.number});
}

void read_kill(PlanStepReader& r) {
  std::optional<bool> on_servers;
  for (const auto& n : r.names("nodes")) {
    r.node("nodes", n, false, true);
    if (on_servers && *on_servers != r.is_server(n)) r.fail("nodes", "must all be servers or all be clients");
    on_servers = r.is_server(n);
  }
  r.step.fault = *on_servers ? "kill-server" : "kill-client";
}

void fire_kill(const PlanStep& s, PlanState& state, PlanInstant planned, std::vector<PlannedLine>& out) {
  out.push_back({"kill",
                 {{"fault", s.fault}, {"targets", state.bound(s.params.at("nodes"))},
                  {"restart_ms", s.for_ms ? s.for_ms->count() : 0}},
                 planned, s.number});
}

void read_restart(PlanStepReader& r) {
  for (const auto& n : r.names("nodes")) r.node("nodes", n, true, false);
  r.step.fault = "restart-server";
}

void fire_restart(const PlanStep& s, PlanState&, PlanInstant planned, std::vector<PlannedLine>& out) {
  out.push_back({"restart", {{"fault", s.fault}, {"targets", s.params.at("nodes")}}, planned, s.number});
}

void read_replay(PlanStepReader& r) {
  const std::string f = r.text("f");
  const nlohmann::json& value = r.at("value");
  if (!value.is_object() || !value.contains("fault") || !value["fault"].is_string()) {
    r.fail("value", "must be a nemesis line's value, an object naming its \"fault\"");
  }
  r.step.fault = value["fault"].get<std::string>();
  const FaultInfo* info = find_fault(r.step.fault);
  if (info == nullptr) r.fail("value", "unknown fault \"" + r.step.fault + "\"; faults: " + fault_names());
  try {  // the family's own replay() reads it, over stand-ins that check every node
    check_replay({r.step.fault}, {ReplayLine{{}, f, value, r.step.line}}, r.servers(), r.clients(),
                 default_fault_options(), "");
  } catch (const InputError& e) {
    const std::string why = e.what();
    const std::size_t at = why.find("cannot be replayed: ");
    r.fail("value", at == std::string::npos ? why : why.substr(at + 20));
  }
  // A replayed cut or clock shift can be healed by the plan's own heals.
  if (info->family == "partition") r.so_far.cut = r.so_far.cut || f == "partition";
  if (info->family == "clock") r.so_far.shifted = r.so_far.shifted || f == "clock-bump" || f == "clock-strobe";
}

void fire_replay(const PlanStep& s, PlanState&, PlanInstant planned, std::vector<PlannedLine>& out) {
  out.push_back({s.params.at("f").get<std::string>(), s.params.at("value"), planned, s.number});
}

using ForMs = PlanActionInfo::ForMs;

}  // namespace

const std::vector<PlanActionInfo>& plan_actions() {
  static const std::vector<PlanActionInfo> actions = {
      {"cut", "cut links both ways, \"grudge\": {\"c1\": [\"n4\", \"n5\"]}, adding to the cuts in force", {"grudge"},
       ForMs::kUndo, read_cut, fire_cut, undo_cut},
      {"heal-cut", "heal every cut in force", {}, ForMs::kNone, read_heal_cut, fire_heal_cut},
      {"clock", "set wall-clock offsets in ms, \"offsets\": {\"n3\": 30000} (servers or clients)", {"offsets"},
       ForMs::kUndo, read_clock, fire_clock, undo_clock},
      {"clock-reset", "set every shifted clock back to the host's", {}, ForMs::kNone, read_clock_reset,
       fire_clock_reset},
      {"pause", "SIGSTOP one process, \"node\": \"c1\", \"holder\" or a server, for for_ms", {"node"}, ForMs::kLength,
       read_pause, fire_pause},
      {"kill", "SIGKILL processes, \"nodes\": [...] (all servers or all clients), started again after for_ms (default 0)",
       {"nodes"}, ForMs::kLength, read_kill, fire_kill},
      {"restart", "stop servers gracefully and start them again, \"nodes\": [...]", {"nodes"}, ForMs::kNone,
       read_restart, fire_restart},
      {"replay", "apply a recorded nemesis line again, \"f\" and \"value\" as history.jsonl has them",
       {"f", "value"}, ForMs::kNone, read_replay, fire_replay},
  };
  return actions;
}

const PlanActionInfo* find_plan_action(std::string_view name) { return find_by_name(plan_actions(), name); }

std::string plan_action_names() { return names_of(plan_actions()); }

}  // namespace fencecheck
