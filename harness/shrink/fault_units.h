// The faults of a recorded run as `fencecheck shrink` counts and keeps them: a fault unit
// is the nemesis lines of one family from its first line to the line that ends it (a
// resume, a heal, the servers' ready, a clock reset, a kill-session) — a pause-holder is its
// arm, its pause and its resume; a kill its kill, start and ready; a kill-session its arm
// and the line of the sessions it ended. A unit the run ended before it closed
// stays one unit. Pure functions over values; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nemesis/schedule.h"

namespace fencecheck {

struct FaultUnit {
  std::string family;
  std::vector<ReplayLine> lines;  // in time order
  // "pause-holder: arm, pause c3, resume c3 at 4.2 s"
  std::string describe() const;
};

// lines: read_replay_lines() of a run (in time order).
std::vector<FaultUnit> group_fault_units(const std::vector<ReplayLine>& lines);

// The kept units' lines as a plan (nemesis/plan.h) of "replay" steps, moved earlier so
// that the first line comes lead_in after the test phase begins (their spacing kept; a
// unit already earlier stays where it was).
nlohmann::json plan_of_units(const std::vector<FaultUnit>& units, const std::vector<std::size_t>& kept,
                             std::chrono::milliseconds lead_in);

// How long a test replaying plan_of_units(units, kept, lead_in) must last for every kept
// line to be applied, plus margin (the violation a fault causes comes soon after it ends).
double fitted_length_s(const std::vector<FaultUnit>& units, const std::vector<std::size_t>& kept,
                       std::chrono::milliseconds lead_in, std::chrono::milliseconds margin);

}  // namespace fencecheck
