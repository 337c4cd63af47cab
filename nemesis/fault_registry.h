// The fault registry: every fault fencecheck can inject, declared once in registry.cpp
// with its family (the Nemesis that runs it, nemesis.h), the options it reads and what it
// needs of the run's runtime, backend and client (platform/capabilities.h). --nemesis, its
// help, the run's validation (harness/run/capability_check.h), the schedule and the plans
// follow from the rows. A new fault needing capabilities that exist is its row plus its
// family's code.
//
// The registry is built once and immutable: thread-safe; nothing here blocks.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nemesis/nemesis.h"
#include "options/option_spec.h"
#include "platform/capabilities.h"

namespace fencecheck {

struct FaultInfo {
  std::string name;    // "pause-holder"
  std::string family;  // "pause": the faults one Nemesis serves together
  std::string description;
  std::function<std::unique_ptr<Nemesis>(NemesisContext&, const FaultOptions&)> make;
  // The options it reads, by name: each declared once in fault_option_specs().
  std::vector<std::string> options = {};
  // What it needs of the run's runtime, backend and client; refused before the run when
  // one of them lacks it.
  Capabilities needs = {};
  // What it needs instead when `--nemesis-targets clients` aims the clock faults at the
  // clients; nullopt: `needs` still.
  std::optional<Capabilities> needs_aimed_at_clients = std::nullopt;
  // `--nemesis-targets clients` makes it hit clients instead of servers (clock faults: a
  // lock library computes validity from its own wall clock).
  bool targets_clients = false;
  // Ends by itself (a pause of --pause-ms, a restart after --restart-ms, a strobe): the
  // schedule never heals it early. Otherwise (a partition, a clock bump) the schedule
  // heals it after a random hold.
  bool self_timed = false;
  // Acts only as a fault plan's step says (nemesis/plan.h): never drawn, not for --nemesis.
  bool planned_only = false;
};

const std::vector<FaultInfo>& fault_registry();
const FaultInfo* find_fault(std::string_view name);  // nullptr when unknown
std::string fault_names();
// Every fault option (--pause-ms, --restart-ms, --clock-max-ms, --clock-min-ms,
// --nemesis-targets, …), each declared once, with the faults that read it named in its help.
const std::vector<OptionSpec>& fault_option_specs();
// Each of fault_option_specs() at its default: what a test's nemesis gets unless it says.
FaultOptions default_fault_options();
// The families of a list of faults, each once, in registry order.
std::vector<std::string> families_of(const std::vector<std::string>& faults);

}  // namespace fencecheck
