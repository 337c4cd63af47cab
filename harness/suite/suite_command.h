// `fencecheck suite kleppmann [--repeat N] [--only K1,K3]` runs Kleppmann's scenarios (and every
// scenario table the same way) and
// `fencecheck suite matrix --backends … --faults …` every backend × fault; both write
// suite.md, suite.html and suite.json into <store>/suite-<kind>/<timestamp>/ and exit with
// suite_exit_code() (0 as expected, 1 an expectation broken, 2 undecided, 3 harness).
// Each is `suite plan` (its rows, harness/suite/suite_plan.h), `suite run-row` for every
// row (harness/suite/suite_rows.h) and `suite collect`, in one process; the three are also
// commands of their own, for rows fanned out over processes, machines or CI jobs.
#pragma once

#include <CLI/CLI.hpp>

namespace fencecheck {

void add_suite_command(CLI::App& app);
// Whether the command line being parsed is `suite run-row`, whose usage errors exit 4 (a
// rerun cannot fix them; exit 3 asks an engine to run the row again), not 3.
bool parsing_run_row(const CLI::App& app);

}  // namespace fencecheck
