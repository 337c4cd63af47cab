// Runs a suite: a list of cases (a Kleppmann scenario, or one backend × fault cell of a
// matrix), each `repeat` times, every run a real `fencecheck run` child process with its
// own seed, in <dir>/runs/<case id>/<timestamp>/. Collects what each run's results.json
// says, judged against the case's scenario when it has one.
//
// Ctrl-C (SIGINT/SIGTERM to the suite) is passed to the run in progress once, which heals,
// tears down and judges what it recorded; the suite then stops and returns what it has,
// marked interrupted. A run that fails as a harness (exit 3) is recorded with its log
// tail and the suite goes on. A suite killed outright (SIGKILL) takes its run with it
// (PR_SET_PDEATHSIG), and the run's servers die with the run; `fencecheck clean` removes
// the rest. Not thread-safe: one suite per process, run from its main thread (the run is
// signalled when the thread that started it exits).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/suite/scenarios.h"

namespace fencecheck {

struct SuiteCase {
  std::string id;  // "K3", or "redis × clock-bump"
  std::string title;
  std::string claim;                 // empty for matrix cells
  std::vector<std::string> args;     // `fencecheck run` options, without --seed/--store/--name
  const Scenario* scenario = nullptr;  // expectations; nullptr: none (a matrix cell)
  std::string backend, faults;       // for the table
};

struct SuiteRun {
  std::uint64_t seed = 0;
  int exit_code = -1;
  std::filesystem::path run_dir;  // empty when the run never made one
  nlohmann::json results;         // its results.json; null when there is none
  std::optional<double> first_violation_s;  // earliest over the checkers
  // The longest stretch a lock was out of reach (report/stuck_locks.h: refused acquires
  // while no client held it), and its refused acquires; nullopt: none, or no history.
  std::optional<double> out_of_reach_s;
  std::uint64_t out_of_reach_refused = 0;
  ScenarioVerdict verdict;        // vs the scenario (meaningless without one)
  double seconds = 0;             // wall time of the whole run (setup and checks included)
  std::string error;              // why the run could not be judged; empty otherwise
  std::string verdict_text() const;  // "valid", "invalid", "unknown", "harness error"
};

struct SuiteRow {
  SuiteCase c;
  std::vector<SuiteRun> runs;
  std::size_t detected() const;
  std::size_t false_alarms() const;
  std::size_t as_expected() const;
  std::optional<double> median_first_violation_s() const;
  // The run with the longest out_of_reach_s; nullptr when none has one.
  const SuiteRun* longest_out_of_reach() const;
};

struct SuiteOptions {
  std::filesystem::path exe;  // the fencecheck binary
  std::filesystem::path dir;  // the suite's own directory (created)
  int repeat = 1;
  std::uint64_t seed = 1;  // run r of case k gets seed + 1000 k + r
  // Called after every run, e.g. to print progress.
  std::function<void(const SuiteRow&, const SuiteRun&)> on_run;
};

struct SuiteResult {
  std::vector<SuiteRow> rows;
  bool interrupted = false;
};

// The last max_bytes of a run's log, from a character boundary, as valid UTF-8: it goes
// into suite.json, and a server's stray bytes must not make that unwritable.
std::string run_log_tail(const std::filesystem::path& log, std::size_t max_bytes = 600);

// Starts args (args[0]: the program's path) as a child leading its own process group, its
// output to log (created), with PR_SET_PDEATHSIG death_signal so that it dies with the
// calling thread. Every signal is blocked across the fork; the child sets its caught
// signals back to their default before it execs with the caller's mask. on_started (may be
// empty) is called with the child's pid while signals are still blocked, so that a stop
// handler that forwards to it never misses it. Returns the pid, or -1 (errno set) when it
// cannot fork. Call from the thread the child should die with (the main thread).
pid_t start_child_group(const std::vector<std::string>& args, const std::filesystem::path& log, int death_signal,
                        const std::function<void(pid_t)>& on_started = {});

// Runs `exe run ARGS` as a child leading its own process group, output to log (created),
// and waits for it: its exit code, -1 when killed. Signals are blocked from before the
// fork until the child has set its caught signals back to their default (ignored ones stay
// ignored, as across exec); it execs with the caller's mask. A SIGINT/SIGTERM to the suite
// meanwhile is passed on once the child is known. Blocks until the run exits; throws
// HarnessError if it cannot fork. run_suite's step, public for tests: call it from the
// main thread (see above), under run_suite's handler to have stops passed on.
int run_suite_child(const std::filesystem::path& exe, const std::vector<std::string>& args,
                    const std::filesystem::path& log);

// One run of case c: `exe run ARGS --seed seed --store store --name <c.id>` (run_suite_child,
// output to log), then judge_suite_run. Blocks until the run exits; throws HarnessError if
// it cannot fork.
SuiteRun run_suite_case(const SuiteCase& c, const std::filesystem::path& exe, const std::filesystem::path& store,
                        const std::filesystem::path& log, std::uint64_t seed);
// What run.run_dir holds, read into run: its results.json (none: run.error quotes log's
// tail), first violation, longest stretch out of reach, and the verdict against c's
// scenario. Reads files only.
void judge_suite_run(const SuiteCase& c, SuiteRun& run, const std::filesystem::path& log);

// Calls step(i) for i = 0, 1, … n − 1 while no SIGINT/SIGTERM came, with the suite's stop
// handler installed (a stop is passed on once to the run in progress, which run_suite_child
// started); returns true when a stop ended it early. From the main thread.
bool for_each_until_stopped(std::size_t n, const std::function<void(std::size_t)>& step);

// Throws HarnessError when the suite directory cannot be made.
SuiteResult run_suite(const std::vector<SuiteCase>& cases, const SuiteOptions& options);

// The cases of a scenario table (`fencecheck suite kleppmann`: kleppmann_scenarios(),
// `suite libraries`: library_scenarios()): every scenario, or those named. Throws
// std::invalid_argument for a name the table lacks.
std::vector<SuiteCase> scenario_cases(const std::vector<Scenario>& table, const std::vector<std::string>& only);

}  // namespace fencecheck
