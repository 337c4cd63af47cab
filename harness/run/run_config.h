// RunConfig: every option of `fencecheck run`, resolved. problem() checks it completely
// before anything starts, so that a bad option never leaves half a run behind; to_json()
// is config.json and from_json() reads it back (--replay); repro_args() is the command
// line that reruns the same test (seed included). The value options live in `opts`, as
// declared once in run_options.h; the cross-option rules (a pause shorter than the test,
// clock-min ≤ clock-max) are problem()'s, and what each fault, the backend and the client
// need of the others is capability_check.h's. Not thread-safe; a value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run/run_options.h"

namespace fencecheck {

struct RunConfig {
  std::string backend = "redis";
  std::vector<std::string> backend_opts;  // "key=value" as typed (--backend-opt)
  std::map<std::string, std::string> backend_options;  // resolved: every option, defaults in
  std::vector<std::string> client_opts;  // "key=value" as typed (--client-opt): the adapter's options
  std::map<std::string, std::string> client_options;  // resolved for --client: every option, defaults in
  std::string workload = "lock-append";
  std::vector<std::string> nemesis = {"pause-holder"};  // fault names; empty: none
  std::string resource = "unfenced";                   // fenced | unfenced
  std::string runtime;                                 // netns | local; empty: by privilege
  // Every option of run_option_schema() (--concurrency, --pause-ms, --model, …) by name;
  // a derived one (--op-timeout-ms, --stall-ms) is filled in by resolve().
  OptionValues opts = run_option_schema().defaults();
  std::optional<std::uint64_t> seed;  // empty: drawn at random, then recorded
  std::string store = "results";
  std::string name;  // empty: "<backend>-<workload>-<faults>-<resource>"
  std::string replay;  // a run directory whose recorded faults this run applies again
  // A fault plan (nemesis/plan.h) replacing the random schedule: a file, or a shipped
  // plan's name (resolve() makes it the file's path). Its faults become `nemesis`.
  std::string plan;
  std::string junit;   // also write JUnit XML here (an output, not part of the test: not in config.json)
  bool clocks_available = false;  // resolve(): the clock-offset library is beside the binary

  // Fills in the defaults that depend on other options or on the machine. Backend options
  // that do not resolve are left for problem() to report.
  void resolve(const OptionSchema& schema = run_option_schema());
  // The first problem found, as one message that says what to do; nullopt when runnable.
  std::optional<std::string> problem(const OptionSchema& schema = run_option_schema()) const;
  // problem() without what depends on this machine (root, installed programs, the clock
  // library): whether a list of arguments makes a valid run anywhere (the suite's).
  std::optional<std::string> input_problem(const OptionSchema& schema = run_option_schema()) const;
  nlohmann::json to_json(const OptionSchema& schema = run_option_schema()) const;
  // The configuration of a stored run (its config.json), for --replay. Throws InputError
  // naming the file and the field when it is missing or mistyped; an option the stored
  // run did not record (it predates the option) gets its default.
  static RunConfig from_json(const nlohmann::json& j, const std::string& file,
                             const OptionSchema& schema = run_option_schema());
  // After "fencecheck run".
  std::vector<std::string> repro_args(const OptionSchema& schema = run_option_schema()) const;
  // repro_args() without --seed, --name and --store: the test itself (the suite and shrink
  // give each of their runs its own).
  std::vector<std::string> test_args(const OptionSchema& schema = run_option_schema()) const;
};

// The run's servers and clients, as a plan names them. Throws std::invalid_argument when
// the backend or its options do not resolve.
std::pair<std::vector<std::string>, std::vector<std::string>> plan_nodes(const RunConfig& c);

}  // namespace fencecheck
