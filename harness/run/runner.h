// run_test: one test end to end — nodes, servers, resource service, workers, clients and
// nemesis for the time limit, heal, final reads, teardown, checkers, report.
//
// Never throws. Returns the exit code of docs/results.md: 0 valid, 1 violation, 2 undecided,
// 3 harness failure or bad options (with one message on `err` saying what to do). Whatever
// was recorded before a failure stays in the run directory. SIGINT/SIGTERM end the test
// phase early; teardown and checks still run, and a run so cut short that found no
// violation is undecided (exit 2), not valid. Every process, namespace and temp file the
// run created is gone when it returns.
#pragma once

#include <iosfwd>

#include "harness/run/run_config.h"

namespace fencecheck {

int run_test(RunConfig config, std::ostream& out, std::ostream& err);

}  // namespace fencecheck
