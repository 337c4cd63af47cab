// `fencecheck clean [--run ID] [--force] [--nodes-file FILE]`: removes what dead runs left behind (processes,
// namespaces, temp files), printing one line per removal. Exit 0 when everything recorded
// is gone (also when a live run, with --force, removed some of it first), 3 when something
// could not be removed (each error printed to stderr).
#pragma once

#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

namespace fencecheck {

// Adds the "clean" subcommand; its callback throws CLI::RuntimeError(3) on errors, which
// CLI11_PARSE / app.exit() turn into exit code 3.
void add_clean_command(CLI::App& app);

// The command's body, for callers that do not go through CLI11. Returns the exit code.
// nodes_file: when not empty, the hosts of an ssh runtime to clean as well.
int run_clean(const std::string& run_id, bool force, const std::string& nodes_file, std::ostream& out,
              std::ostream& err);

}  // namespace fencecheck
