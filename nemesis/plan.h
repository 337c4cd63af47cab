// A fault plan (`--plan FILE`): the faults of a run as a written timeline instead of a
// random schedule — Kleppmann's Redlock story step by step, or an incident as it happened.
//
// The file is a JSON list of steps. Each step has exactly one trigger and one action:
//   triggers  "at_ms": N        N ms after the test phase began (not before the previous step)
//             "after_ms": N     N ms after the previous step was applied
//             "on": "acquire-ok" | "release", "client": "c1" | "holder", optional "key"
//                               the next such lock event after the previous step; "holder"
//                               is any client, and becomes "the holder" later steps may name
//   actions   "do": one of plan_actions() (plan_actions.h: cut, heal-cut, clock, clock-reset,
//             pause, kill, restart, and replay: any recorded nemesis line), with its fields, and an optional "for_ms": how long it
//             lasts (a cut or a clock offset is undone after it; a pause lasts it; killed
//             nodes stay down for it).
// Steps run in order, one after the other. A step an event fires is applied on that
// client's own thread before its next op (the holder is paused right after it acquired,
// not some milliseconds later). Every applied step is an ordinary nemesis line of the
// history, recorded by the fault's family, so --replay and the report need nothing new.
//
// read_plan() refuses a bad plan before anything starts: an unknown action, field or node,
// a field of the wrong type, "holder" before any lock event, a heal with nothing to heal.
// Errors are InputError naming the file, the line where the step begins, the step's number
// and the field. Pure functions over the file; PlanCursor (plan_cursor.h) runs a plan.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nemesis/lock_events.h"

namespace fencecheck {

// The client that fired the last lock event a plan waited for, as steps name it.
inline constexpr const char* kPlanHolder = "holder";

enum class PlanTrigger { kAt, kAfter, kOnEvent };
// A step fires on one of these (lock_events.h): the only events a plan names.
inline constexpr LockEventKind kPlanEvents[] = {LockEventKind::kAcquireOk, LockEventKind::kRelease};

struct PlanStep {
  std::size_t number = 0;  // 1-based, for messages
  std::size_t line = 0;    // where it begins in the file
  PlanTrigger trigger = PlanTrigger::kAt;
  std::chrono::milliseconds delay{0};  // at_ms or after_ms
  LockEventKind event = LockEventKind::kAcquireOk;
  std::string client;              // on: a client node, or kPlanHolder for any
  std::optional<std::string> key;  // on: only events on this lock
  std::string action;              // "cut", ...
  nlohmann::json params;           // the action's own fields, as written
  std::string fault;               // the registry fault it records ("kill-server")
  std::optional<std::chrono::milliseconds> for_ms;
};

struct Plan {
  std::string file;
  std::vector<PlanStep> steps;
  // The registry's faults its steps record (families_of() makes the nemeses that apply them).
  std::vector<std::string> faults;
};

// Where `--plan NAME` is read: NAME itself when it is a file or a path; else a plan shipped
// with fencecheck, <plans>/NAME.json, where <plans> is $FENCECHECK_PLANS_DIR or the plans/
// folder beside the binary (plans/ in the source tree). Never throws.
std::string resolve_plan_path(const std::string& plan);
// The shipped plans' names ("k3-exact, …"), for messages.
std::string shipped_plan_names();

// Reads and checks a plan: its steps' shape, every node against the run's servers and
// clients, and that each heal has something in force to heal. Throws InputError (a file
// that cannot be read is line 0).
Plan read_plan(const std::string& file, const std::vector<std::string>& servers,
               const std::vector<std::string>& clients);

}  // namespace fencecheck
