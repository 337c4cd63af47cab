// The actions a fault plan's step may take (plan.h), each declared once here: its fields,
// what its for_ms means, how it is read and checked, and the nemesis lines it turns into
// when it fires and when its for_ms ends — in the vocabulary each family's
// Nemesis::replay() reads, so that applying a step is exactly applying a recorded line.
// plan.cpp reads the triggers and calls `read`; PlanCursor (plan_cursor.h) orders the steps
// and calls `fire` and `undo`. The registry is immutable; the functions are pure over their
// arguments (PlanState is the cursor's, under its lock).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
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

// What a plan has in force as it is read, step by step: a heal with nothing to heal, or
// "holder" before any lock event, is refused.
struct PlanSoFar {
  bool cut = false;
  bool shifted = false;
  bool saw_event = false;
};

// One step's action being read: its fields, the run's nodes. fail() throws InputError
// naming the file, the step's line and number, and the field.
class PlanStepReader {
 public:
  PlanStepReader(const std::string& file, PlanStep& step, const nlohmann::json& j, const std::vector<std::string>& servers,
                 const std::vector<std::string>& clients, PlanSoFar& so_far)
      : step(step), so_far(so_far), file_(file), j_(j), servers_(servers), clients_(clients) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const;
  std::int64_t ms(const char* field) const;  // a whole number of ms, 0 ≤ ms ≤ a day
  std::string text(const char* field) const;
  const nlohmann::json& at(const char* field) const;  // the field, which must be there
  std::vector<std::string> names(const char* field) const;  // a non-empty list of strings
  const std::vector<std::string>& servers() const { return servers_; }
  const std::vector<std::string>& clients() const { return clients_; }
  bool is_server(const std::string& n) const;
  bool is_client(const std::string& n) const;  // "holder" too
  // Checks a node `field` names: a server (servers_only), else a server or client; "holder"
  // only where holder_ok and after a lock event.
  void node(const char* field, const std::string& n, bool servers_only, bool holder_ok) const;

  PlanStep& step;
  PlanSoFar& so_far;

 private:
  const std::string& file_;
  const nlohmann::json& j_;
  const std::vector<std::string>& servers_;
  const std::vector<std::string>& clients_;
};

// What a running plan has in force (PlanCursor's, under its lock).
struct PlanState {
  std::string holder;                   // the client of the last lock event a step fired on
  std::map<std::size_t, Grudge> cuts;   // by step number: the cuts in force, both ways
  std::map<std::string, std::int64_t> offsets;  // node → ms: what the plan set
  struct ClockStep {
    std::map<std::string, std::int64_t> before, set;
  };
  std::map<std::size_t, ClockStep> clock_steps;  // a clock step with for_ms, until undone
  std::string bound(const std::string& node) const { return node == kPlanHolder ? holder : node; }
  nlohmann::json bound(const nlohmann::json& j) const;  // "holder" in a string or a list replaced
};

using PlanInstant = std::optional<TimeSource::Instant>;

struct PlanActionInfo {
  std::string name;         // "cut"
  std::string description;  // for --help and the docs
  std::vector<std::string> fields;  // its own fields besides the trigger and for_ms
  enum class ForMs { kNone, kUndo, kLength };  // for_ms not taken / undoes it after / is its length
  ForMs for_ms = ForMs::kNone;
  void (*read)(PlanStepReader& r) = nullptr;  // checks the fields, sets step.fault
  void (*fire)(const PlanStep& s, PlanState& state, PlanInstant planned, std::vector<PlannedLine>& out) = nullptr;
  void (*undo)(const PlanStep& s, PlanState& state, PlanInstant at, std::vector<PlannedLine>& out) = nullptr;
};
const std::vector<PlanActionInfo>& plan_actions();
const PlanActionInfo* find_plan_action(std::string_view name);
// "cut (grudge), heal-cut, …": for messages and --help.
std::string plan_action_names();

}  // namespace fencecheck
