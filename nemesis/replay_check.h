// check_replay: a recorded schedule refused before anything starts, not when its instant
// comes. Every line is applied, in order, to the families of the run's faults over
// stand-in capabilities that act on nothing and only check names: each node a line names
// must be a server or client of the replaying run, each field the family's replay() reads
// must be there with its type, each action must be one the family can replay. The real
// replay() code does the reading, so what passes here is exactly what the run will apply.
// Pure: no thread, no process, no file.
#pragma once

#include <string>
#include <vector>

#include "nemesis/nemesis.h"
#include "nemesis/schedule.h"

namespace fencecheck {

// Throws InputError(file, line, "value", what) for the first line that would fail, naming
// what is wrong (an unknown node, a fault not among `faults`, a missing field).
void check_replay(const std::vector<std::string>& faults, const std::vector<ReplayLine>& lines,
                  const std::vector<std::string>& servers, const std::vector<std::string>& clients,
                  const FaultOptions& options, const std::string& file);

}  // namespace fencecheck
