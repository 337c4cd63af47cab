#include "nemesis/plan.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "nemesis/plan_actions.h"
#include "platform/errors.h"

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

PlanStep read_step(const std::string& file, const nlohmann::json& j, std::size_t number, std::size_t line,
                   const std::vector<std::string>& servers, const std::vector<std::string>& clients, PlanSoFar& so_far) {
  PlanStep step;
  step.number = number;
  step.line = line;
  PlanStepReader r(file, step, j, servers, clients, so_far);
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
    const auto* named = std::find_if(std::begin(kPlanEvents), std::end(kPlanEvents),
                                     [&](LockEventKind k) { return to_string(k) == on; });
    if (named == std::end(kPlanEvents)) r.fail("on", "must be acquire-ok or release, not \"" + on + "\"");
    step.event = *named;
    if (!j.contains("client")) r.fail("client", "is missing: a client node, or \"holder\" for any client");
    step.client = r.text("client");
    if (!r.is_client(step.client)) {
      std::string names;
      for (const auto& c : clients) names += (names.empty() ? "" : ", ") + c;
      r.fail("client", "\"" + step.client + "\" is not a client of this run (lock events come from clients: " + names +
                           ", or \"holder\" for any)");
    }
    if (j.contains("key")) step.key = r.text("key");
    so_far.saw_event = true;
  }
  if ((j.contains("client") || j.contains("key")) && step.trigger != PlanTrigger::kOnEvent) {
    r.fail(j.contains("client") ? "client" : "key", "belongs to an \"on\" trigger");
  }
  if (!j.contains("do")) r.fail("do", "is missing; actions: " + plan_action_names());
  step.action = r.text("do");
  const PlanActionInfo* action = find_plan_action(step.action);
  if (action == nullptr) r.fail("do", "unknown action \"" + step.action + "\"; actions: " + plan_action_names());
  const bool takes_for_ms = action->for_ms != PlanActionInfo::ForMs::kNone;
  if (j.contains("for_ms")) {
    if (!takes_for_ms) r.fail("for_ms", "action \"" + step.action + "\" takes no for_ms");
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
                        (known.empty() ? std::string("none") : known) + (takes_for_ms ? ", for_ms" : "") + ")");
    }
  }
  action->read(r);
  return step;
}

Plan read(const std::string& file, const std::vector<std::string>& servers, const std::vector<std::string>& clients) {
  std::ifstream in(file);
  if (!in) throw InputError(file, 0, "", "cannot read the plan file (shipped plans: " + shipped_plan_names() + ")");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const auto upto = text.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(e.byte, text.size()));
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), upto, '\n'));
    throw InputError(file, line, "", "not JSON (a plan is a JSON list of steps): " + std::string(e.what()));
  }
  if (!j.is_array()) throw InputError(file, 1, "", "a plan is a JSON list of steps, not " + std::string(j.type_name()));
  if (j.empty()) throw InputError(file, 1, "", "the plan has no steps");
  const std::vector<std::size_t> lines = element_lines(text);
  Plan plan;
  plan.file = file;
  PlanSoFar so_far;
  std::set<std::string> faults;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::size_t line = i < lines.size() ? lines[i] : (lines.empty() ? 1 : lines.back());
    plan.steps.push_back(read_step(file, j[i], i + 1, line, servers, clients, so_far));
    faults.insert(plan.steps.back().fault);
  }
  plan.faults.assign(faults.begin(), faults.end());
  return plan;
}

}  // namespace


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
  return read(file, servers, clients);
}

}  // namespace fencecheck
