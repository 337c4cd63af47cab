// `fencecheck adapters [--json]`: every value of --client — fencecheck's own clients and
// each lock library's adapter, with its library and version, its language, the backends it
// fits, what the library promises, and whether it can start on this machine (or what to
// install). Exit 0. Nothing blocks.
#pragma once

#include <iosfwd>

#include <CLI/CLI.hpp>

namespace fencecheck {

void add_adapters_command(CLI::App& app);
void print_adapters(std::ostream& out, bool json);

}  // namespace fencecheck
