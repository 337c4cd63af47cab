// `fencecheck run`: one test end to end (harness/run/runner.h), configured from the
// command line. With no options it runs the default test: redis, lock-append,
// pause-holder, unfenced resource, 30 s — the failure of Kleppmann's article.
//
// The value options' flags come from the schema (harness/run/run_options.h), which must
// outlive the CLI::App. parse_run_args() reads an argument list exactly as `fencecheck run`
// does, without running anything: the suite checks its scenarios with it. Errors are
// std::invalid_argument naming the option.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/run/run_config.h"

namespace fencecheck {

// What the flags of `fencecheck run` parse into; finish() types the value options.
struct RunArgs {
  RunConfig config;
  std::map<std::string, std::string> typed;  // value options as typed, by name

  // Throws std::invalid_argument for a value that is not of its option's type.
  void finish(const OptionSchema& schema) { schema.apply_cli(typed, config.opts); }
};

// Declares every flag of `fencecheck run` on cmd, parsing into args.
void add_run_options(CLI::App& cmd, RunArgs& args, const OptionSchema& schema);
// The configuration `fencecheck run <args>` would run (not resolved). Throws
// std::invalid_argument for an unknown flag or a value that does not parse.
RunConfig parse_run_args(const std::vector<std::string>& args, const OptionSchema& schema = run_option_schema());
void add_run_command(CLI::App& app, const OptionSchema& schema = run_option_schema());

}  // namespace fencecheck
