// The options of `fencecheck run` that are plain values (numbers, durations, words): the
// run's and the workload's, declared in run_options.cpp, the faults' (nemesis/registry.cpp)
// and the checkers' (checkers/registry.cpp), gathered into one schema. Everything about an
// option — flag, help, range, config.json field, repro.sh arguments, --replay — follows
// from that declaration (harness/option_schema.h). The structural options (backend,
// workload, faults, runtime, seed, store, name) are RunConfig's own fields.
//
// run_option_schema() is built once and immutable: thread-safe. A test extends a copy of
// make_run_option_schema() and passes it to RunConfig's and add_run_options()'s overloads.
#pragma once

#include "harness/option_schema.h"

namespace fencecheck {

OptionSchema make_run_option_schema();
const OptionSchema& run_option_schema();

}  // namespace fencecheck
