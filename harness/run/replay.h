// Where a run's faults come from. --replay: the stored run a replaying run copies — its configuration and the nemesis
// lines it applies again at the same offsets from the start of the test phase.
//
// A line recorded as "not_applied" (its target was down) changed nothing and is left out.
// read_replay_lines() checks the shape of every line; whether each line's nodes, fault and
// action fit the replaying run is nemesis/replay_check.h's, before anything starts. Errors
// are InputError naming the file and line, or HarnessError when the run directory cannot
// be read. Pure functions over files.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/run/run_config.h"
#include "nemesis/plan.h"
#include "nemesis/schedule.h"

namespace fencecheck {

// The stored run's configuration (given.replay/config.json); only the store, the name and
// --junit come from `given`.
RunConfig replayed_config(const RunConfig& given);

// The stored run's nemesis lines, due at the same offsets from the start of its test
// phase — each at the instant it was planned for (planned_ns: when its action began), or
// when it was recorded if it has none — measured from its first client invoke (its setup took its own time, so offsets from its t0 would
// shift every fault by the difference in setup times).
std::vector<ReplayLine> read_replay_lines(const std::string& run_dir);

// Where read_replay_lines() reads, for messages.
std::string replay_history_path(const std::string& run_dir);

// read_replay_lines(c.replay), each line checked against the replaying run — its faults
// (c.nemesis), server and client nodes and fault options (nemesis/replay_check.h) — before
// anything starts. Throws InputError or HarnessError as those do.
std::vector<ReplayLine> load_replay(const RunConfig& c, const std::vector<std::string>& servers,
                                    const std::vector<std::string>& clients, const FaultOptions& options);

// Where a run's faults come from, read and checked before setup: the lines of a stored
// run (--replay), a written plan (--plan), or neither (drawn from c.nemesis by the seed).
struct FaultSource {
  std::vector<ReplayLine> replay;
  std::optional<Plan> plan;
  // The schedule that applies them, made as the test phase begins. Consumes the lines and
  // the plan.
  std::unique_ptr<NemesisSchedule> make_schedule(const RunConfig& c, NemesisContext& ctx, const FaultOptions& options);
  // How long the test phase must last at least: until the last replayed line (the stored
  // run's final heal) is applied, so that no fault is lost to jitter; 0 otherwise.
  std::chrono::nanoseconds must_last() const;
  // A plan's progress into the run's health block ("plan": steps, fired), with a warning
  // when the run ended before every step fired (a step waiting for an event that never came).
  static void note_progress(const NemesisSchedule& schedule, nlohmann::json& health);
  // "--plan: " or "--replay: " for an error of loading them; empty for neither.
  static std::string option_of(const RunConfig& c);
};
// Throws InputError or HarnessError as load_replay() and read_plan() do.
FaultSource load_fault_source(const RunConfig& c, const std::vector<std::string>& servers,
                              const std::vector<std::string>& clients, const FaultOptions& options);

}  // namespace fencecheck
