#include "nemesis/plan.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "nemesis/nemesis.h"
#include "nemesis/replay_check.h"
#include "platform/errors.h"
#include "platform/named_registry.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

const char* const kTriggerFields[] = {"at_ms", "after_ms", "on", "client", "key"};

// The line each top-level element of a JSON list begins on (a small scanner: strings and
// nesting only). Elements past the end of the scan get the last line seen.
std::vector<std::size_t> element_lines(const std::string& text) {
  std::vector<std::size_t> lines;
  std::size_t line = 1;
  int depth = 0;
  bool in_string = false, escaped = false, expecting = false;
  for (char ch : text) {
    if (ch == '\n') ++line;
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') continue;
    if (depth == 1 && expecting && ch != ']') {
      lines.push_back(line);
      expecting = false;
    }
    if (ch == '"') in_string = true;
    else if (ch == '[' || ch == '{') {
      if (++depth == 1) expecting = true;
    } else if (ch == ']' || ch == '}') {
      --depth;
    } else if (ch == ',' && depth == 1) {
      expecting = true;
    }
  }
  return lines;
}

class StepReader {
 public:
  StepReader(const std::string& file, PlanStep& step, const nlohmann::json& j) : file_(file), step_(step), j_(j) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(file_, step_.line, field, "step " + std::to_string(step_.number) + ": " + what);
  }
  bool has(const char* field) const { return j_.contains(field); }
  std::int64_t ms(const char* field) const {
    const nlohmann::json& v = j_.at(field);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0) fail(field, "must be a whole number of ms ≥ 0, not " + v.dump());
    return v.get<std::int64_t>();
  }
  std::string text(const char* field) const {
    const nlohmann::json& v = j_.at(field);
    if (!v.is_string()) fail(field, "must be a string, not " + v.dump());
    return v.get<std::string>();
  }
  const nlohmann::json& at(const char* field) const {
    if (!j_.contains(field)) fail(field, "is missing (action \"" + step_.action + "\" needs it)");
    return j_.at(field);
  }
  std::vector<std::string> names(const char* field) const {
    const nlohmann::json& v = at(field);
    if (!v.is_array() || v.empty()) fail(field, "must be a non-empty list of node names, not " + v.dump());
    std::vector<std::string> out;
    for (const auto& n : v) {
      if (!n.is_string()) fail(field, "must list node names, not " + n.dump());
      out.push_back(n.get<std::string>());
    }
    return out;
  }

 private:
  const std::string& file_;
  PlanStep& step_;
  const nlohmann::json& j_;
};

// The server and client nodes of the run being planned.
struct Nodes {
  std::vector<std::string> servers, clients;
  bool is_server(const std::string& n) const { return std::find(servers.begin(), servers.end(), n) != servers.end(); }
  bool is_client(const std::string& n) const {
    return n == kPlanHolder || std::find(clients.begin(), clients.end(), n) != clients.end();
  }
  static std::string list(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("none") : s;
  }
  // A node `field` names; `holder_ok`: "holder" may stand for the client of the last event.
  void check(const StepReader& r, const char* field, const std::string& n, bool holder_ok, bool servers_only) const {
    if (n == kPlanHolder && !holder_ok) r.fail(field, "cannot name \"holder\" here: name the node");
    if (servers_only ? is_server(n) : (is_server(n) || is_client(n))) return;
    r.fail(field, "node \"" + n + "\" is not a " + (servers_only ? "server" : "server or client") +
                      " of this run (servers: " + list(servers) + (servers_only ? "" : "; clients: " + list(clients)) + ")");
  }
};

// What the plan has in force so far, to refuse a heal with nothing to heal.
struct Simulated {
  bool cut = false;
  bool shifted = false;
  bool saw_event = false;
};

void read_action(StepReader& r, PlanStep& step, const Nodes& nodes, Simulated& sim) {
  const bool holder_ok = sim.saw_event;
  auto holder_check = [&](const char* field, const std::string& n, bool servers_only) {
    if (n == kPlanHolder && !holder_ok && !servers_only) {
      r.fail(field, "names \"holder\", but no step before it waits for a lock event");
    }
    nodes.check(r, field, n, !servers_only, servers_only);
  };
  if (step.action == "cut") {
    const nlohmann::json& g = r.at("grudge");
    if (!g.is_object() || g.empty()) r.fail("grudge", "must be an object: node → list of nodes it is cut from");
    for (const auto& [node, from] : g.items()) {
      holder_check("grudge", node, false);
      if (!from.is_array() || from.empty()) r.fail("grudge", "\"" + node + "\" must map to a non-empty list of nodes");
      for (const auto& other : from) {
        if (!other.is_string()) r.fail("grudge", "\"" + node + "\" must list node names, not " + other.dump());
        holder_check("grudge", other.get<std::string>(), false);
        if (other.get<std::string>() == node) r.fail("grudge", "\"" + node + "\" cannot be cut from itself");
      }
    }
    step.fault = "partition-nodes";
    if (!step.for_ms) sim.cut = true;
  } else if (step.action == "heal-cut") {
    if (!sim.cut) r.fail("do", "heal-cut, but no cut without for_ms is in force before it");
    step.fault = "partition-nodes";
    sim.cut = false;
  } else if (step.action == "clock") {
    const nlohmann::json& o = r.at("offsets");
    if (!o.is_object() || o.empty()) r.fail("offsets", "must be an object: node → wall-clock offset in ms");
    for (const auto& [node, ms] : o.items()) {
      nodes.check(r, "offsets", node, false, false);
      if (!ms.is_number_integer()) r.fail("offsets", "\"" + node + "\" must be a whole number of ms, not " + ms.dump());
    }
    step.fault = "clock-bump";
    if (!step.for_ms) sim.shifted = true;
  } else if (step.action == "clock-reset") {
    if (!sim.shifted) r.fail("do", "clock-reset, but no clock offset without for_ms is in force before it");
    step.fault = "clock-reset";
    sim.shifted = false;
  } else if (step.action == "pause") {
    const std::string node = r.text("node");
    holder_check("node", node, false);
    if (!step.for_ms) r.fail("for_ms", "is missing: a pause needs its length");
    step.fault = nodes.is_server(node) ? "pause-server" : "pause-client";
  } else if (step.action == "replay") {
    const std::string f = r.text("f");
    const nlohmann::json& value = r.at("value");
    if (!value.is_object() || !value.contains("fault") || !value["fault"].is_string()) {
      r.fail("value", "must be a nemesis line's value, an object naming its \"fault\"");
    }
    step.fault = value["fault"].get<std::string>();
    const FaultInfo* info = find_fault(step.fault);
    if (info == nullptr) r.fail("value", "unknown fault \"" + step.fault + "\"; faults: " + fault_names());
    try {  // the family's own replay() reads it, over stand-ins that check every node
      check_replay({step.fault}, {ReplayLine{{}, f, value, step.line}}, nodes.servers, nodes.clients,
                   default_fault_options(), "");
    } catch (const InputError& e) {
      const std::string why = e.what();
      const std::size_t at = why.find("cannot be replayed: ");
      r.fail("value", at == std::string::npos ? why : why.substr(at + 20));
    }
  } else if (step.action == "kill" || step.action == "restart") {
    const bool servers_only = step.action == "restart";
    std::optional<bool> on_servers;
    for (const auto& n : r.names("nodes")) {
      holder_check("nodes", n, servers_only);
      const bool server = nodes.is_server(n);
      if (on_servers && *on_servers != server) r.fail("nodes", "must all be servers or all be clients");
      on_servers = server;
    }
    step.fault = servers_only ? "restart-server" : (*on_servers ? "kill-server" : "kill-client");
  }
}

PlanStep read_step(const std::string& file, const nlohmann::json& j, std::size_t number, std::size_t line,
                   const Nodes& nodes, Simulated& sim) {
  PlanStep step;
  step.number = number;
  step.line = line;
  StepReader r(file, step, j);
  if (!j.is_object()) r.fail("", "a step must be an object with a trigger and \"do\", not " + j.dump());
  const int triggers = (j.contains("at_ms") ? 1 : 0) + (j.contains("after_ms") ? 1 : 0) + (j.contains("on") ? 1 : 0);
  if (triggers != 1) r.fail("", "needs exactly one trigger: at_ms, after_ms or on (found " + std::to_string(triggers) + ")");
  if (j.contains("at_ms")) {
    step.trigger = PlanTrigger::kAt;
    step.delay = milliseconds(r.ms("at_ms"));
  } else if (j.contains("after_ms")) {
    step.trigger = PlanTrigger::kAfter;
    step.delay = milliseconds(r.ms("after_ms"));
  } else {
    step.trigger = PlanTrigger::kOnEvent;
    const std::string on = r.text("on");
    if (on == to_string(LockEventKind::kAcquireOk)) step.event = LockEventKind::kAcquireOk;
    else if (on == to_string(LockEventKind::kRelease)) step.event = LockEventKind::kRelease;
    else r.fail("on", "must be acquire-ok or release, not \"" + on + "\"");
    if (!j.contains("client")) r.fail("client", "is missing: a client node, or \"holder\" for any client");
    step.client = r.text("client");
    if (!nodes.is_client(step.client)) {
      r.fail("client", "\"" + step.client + "\" is not a client of this run (lock events come from clients: " +
                           nodes.list(nodes.clients) + ", or \"holder\" for any)");
    }
    if (j.contains("key")) step.key = r.text("key");
    sim.saw_event = true;
  }
  if ((j.contains("client") || j.contains("key")) && step.trigger != PlanTrigger::kOnEvent) {
    r.fail(j.contains("client") ? "client" : "key", "belongs to an \"on\" trigger");
  }
  if (!j.contains("do")) r.fail("do", "is missing; actions: " + names_of(plan_actions()));
  step.action = r.text("do");
  const PlanActionInfo* action = find_plan_action(step.action);
  if (action == nullptr) r.fail("do", "unknown action \"" + step.action + "\"; actions: " + names_of(plan_actions()));
  if (j.contains("for_ms")) {
    if (!action->takes_for_ms) r.fail("for_ms", "action \"" + step.action + "\" takes no for_ms");
    step.for_ms = milliseconds(r.ms("for_ms"));
  }
  step.params = nlohmann::json::object();
  for (const auto& [field, value] : j.items()) {
    const bool trigger = std::find(std::begin(kTriggerFields), std::end(kTriggerFields), field) != std::end(kTriggerFields);
    const bool own = std::find(action->fields.begin(), action->fields.end(), field) != action->fields.end();
    if (own) step.params[field] = value;
    if (!trigger && !own && field != "do" && field != "for_ms") {
      std::string known;
      for (const auto& f : action->fields) known += (known.empty() ? "" : ", ") + f;
      r.fail(field, "unknown field for action \"" + step.action + "\" (its fields: " +
                        (known.empty() ? std::string("none") : known) + (action->takes_for_ms ? ", for_ms" : "") + ")");
    }
  }
  read_action(r, step, nodes, sim);
  return step;
}

Plan read(const std::string& file, const Nodes& nodes) {
  std::ifstream in(file);
  if (!in) throw InputError(file, 0, "", "cannot read the plan file (shipped plans: " + shipped_plan_names() + ")");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw InputError(file, 0, "", "not JSON: a plan is a JSON list of steps");
  if (!j.is_array()) throw InputError(file, 1, "", "a plan is a JSON list of steps, not " + std::string(j.type_name()));
  if (j.empty()) throw InputError(file, 1, "", "the plan has no steps");
  const std::vector<std::size_t> lines = element_lines(text);
  Plan plan;
  plan.file = file;
  Simulated sim;
  std::set<std::string> faults;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::size_t line = i < lines.size() ? lines[i] : (lines.empty() ? 1 : lines.back());
    plan.steps.push_back(read_step(file, j[i], i + 1, line, nodes, sim));
    faults.insert(plan.steps.back().fault);
  }
  plan.faults.assign(faults.begin(), faults.end());
  return plan;
}

}  // namespace

std::string_view to_string(LockEventKind k) { return k == LockEventKind::kAcquireOk ? "acquire-ok" : "release"; }

const std::vector<PlanActionInfo>& plan_actions() {
  static const std::vector<PlanActionInfo> actions = {
      {"cut", "cut links both ways, \"grudge\": {\"c1\": [\"n4\", \"n5\"]}; adds to the cuts in force",
       {"grudge"}, {"partition-nodes"}},
      {"heal-cut", "heal every cut in force", {}, {"partition-nodes"}, false},
      {"clock", "set wall-clock offsets, \"offsets\": {\"n3\": 30000} (ms; servers or clients)", {"offsets"},
       {"clock-bump"}},
      {"clock-reset", "set every shifted clock back to the host's", {}, {"clock-reset"}, false},
      {"pause", "SIGSTOP one process, \"node\": \"c1\" or \"holder\" or a server, for for_ms", {"node"},
       {"pause-client", "pause-server"}},
      {"kill", "SIGKILL processes, \"nodes\": [...] (all servers or all clients); restart after for_ms (default 0)",
       {"nodes"}, {"kill-server", "kill-client"}},
      {"restart", "stop servers gracefully and start them again, \"nodes\": [...]", {"nodes"}, {"restart-server"}, false},
      {"replay", "apply a recorded nemesis line again, \"f\" and \"value\" as history.jsonl has them (what "
       "`fencecheck shrink` writes)", {"f", "value"}, {}, false},
  };
  return actions;
}

const PlanActionInfo* find_plan_action(std::string_view name) { return find_by_name(plan_actions(), name); }

namespace {
std::filesystem::path plans_dir() {
  if (const char* env = std::getenv("FENCECHECK_PLANS_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "plans";
}
}  // namespace

std::string resolve_plan_path(const std::string& plan) {
  std::error_code ec;
  if (plan.empty() || plan.find('/') != std::string::npos || std::filesystem::exists(plan, ec)) return plan;
  std::filesystem::path shipped = plans_dir() / (plan + ".json");
  return std::filesystem::exists(shipped, ec) ? shipped.string() : plan;
}

std::string shipped_plan_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(plans_dir(), ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? std::string("none found") : s;
}

Plan read_plan(const std::string& file, const std::vector<std::string>& servers, const std::vector<std::string>& clients) {
  return read(file, Nodes{servers, clients});
}

}  // namespace fencecheck
