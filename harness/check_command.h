// `fencecheck check PATH …`: runs the checkers on a recorded run (or a history file),
// prints a short summary (or results.json with --json) and returns the exit code of
// docs/results.md: 0 valid, 1 violation, 2 undecided, 3 bad input.
#pragma once

#include <CLI/CLI.hpp>

namespace fencecheck {

void add_check_command(CLI::App& app);

}  // namespace fencecheck
