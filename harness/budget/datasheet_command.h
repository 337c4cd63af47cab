// `fencecheck datasheet` on the command line (datasheet_command.cpp says what it does).
#pragma once

#include <CLI/CLI.hpp>

namespace fencecheck {

void add_datasheet_command(CLI::App& app);

}  // namespace fencecheck
