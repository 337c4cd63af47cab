// `fencecheck shrink RUN_DIR [--tries N] [--budget S] [--store DIR]`: the smallest rerun of
// a failed run that still fails the same way.
//
// The run's recorded faults (fault_units.h) are searched with ddmin, then its length
// (shrink.h); each candidate is a real `fencecheck run` child process (the suite's runner)
// with the stored run's configuration and seed, the candidate's faults as a plan of
// "replay" steps moved to the start of the test, and the candidate's length. A try
// reproduces when a checker that found the original invalid finds it invalid again.
//
// Writes <store>/<name>-shrink/<stamp>/: the final candidate's reproducing run (history,
// report, plan.json, repro.sh), shrink.json (every step of the search: faults kept, tries,
// outcomes, seconds; the final rate) and tries/ (every try's run). Exit 0 when a candidate
// reproduced, 1 when the original never failed again (the original is kept: nothing
// written but shrink.json and the tries), 2 when interrupted (Ctrl-C reaches the run in
// progress, which heals and ends), 3 for a directory that is not a failed run or a bench
// that fails. Blocks for as long as its tries take, at most about the budget plus one run.
#pragma once

#include <CLI/CLI.hpp>

namespace fencecheck {

void add_shrink_command(CLI::App& app);

}  // namespace fencecheck
