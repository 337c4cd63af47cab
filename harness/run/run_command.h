// `fencecheck run`: one test end to end (harness/run/runner.h), configured from the
// command line. With no options it runs the default test: redis, lock-append,
// pause-holder, unfenced resource, 30 s — the failure of Kleppmann's article.
#pragma once

#include <CLI/CLI.hpp>

namespace fencecheck {

void add_run_command(CLI::App& app);

}  // namespace fencecheck
