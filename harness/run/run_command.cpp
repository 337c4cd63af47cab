#include "harness/run/run_command.h"

#include <iostream>
#include <memory>

#include "backends/registry.h"
#include "harness/run/runner.h"
#include "nemesis/nemesis.h"
#include "workloads/workload.h"

namespace fencecheck {

void add_run_command(CLI::App& app) {
  auto c = std::make_shared<RunConfig>();
  CLI::App* cmd = app.add_subcommand("run", "Run a test: real servers, clients, faults, then the checkers");
  cmd->add_option("--backend", c->backend, "lock service under test: " + backend_names())
      ->capture_default_str();
  cmd->add_option("--backend-opt", c->backend_opts,
                  "key=value option of the backend (repeatable), e.g. persistence=always for redis");
  cmd->add_option("--workload", c->workload, "what clients do: " + workload_names())->capture_default_str();
  cmd->add_option("--nemesis", c->nemesis, "comma-separated faults (" + fault_names() + ") or none")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--resource", c->resource, "fenced: the resource refuses stale tokens; unfenced: accepts all")
      ->capture_default_str();
  cmd->add_option("--runtime", c->runtime, "netns (default as root) or local (127.0.0.1, no partitions)");
  cmd->add_option("--concurrency", c->concurrency, "client processes")->capture_default_str();
  cmd->add_option("--keys", c->keys, "locks (and resource keys)")->capture_default_str();
  cmd->add_option("--hold-ms", c->hold_ms, "longest time a client holds a lock")->capture_default_str();
  cmd->add_option("--ttl-ms", c->ttl_ms, "lease of each grant")->capture_default_str();
  cmd->add_option("--pause-ms", c->pause_ms, "how long a pause lasts")->capture_default_str();
  cmd->add_option("--nemesis-interval", c->nemesis_interval_ms, "ms between the starts of faults")
      ->capture_default_str();
  cmd->add_option("--restart-ms", c->restart_ms,
                  "kill-server, kill-client: how long a killed process stays down (0: restart at once)")
      ->capture_default_str();
  cmd->add_option("--clock-max-ms", c->clock_max_ms, "largest wall-clock offset a clock fault sets")
      ->capture_default_str();
  cmd->add_option("--clock-min-ms", c->clock_min_ms, "smallest magnitude of a clock-bump")->capture_default_str();
  cmd->add_option("--nemesis-targets", c->nemesis_targets,
                  "which servers kill-server, clock-bump and clock-strobe hit: random, one, minority, majority "
                  "or all (default: each fault's own draw)");
  cmd->add_option("--replay", c->replay,
                  "rerun a stored run: its config.json, and its recorded faults at the same offsets "
                  "(only --store, --name and --junit may be given with it)");
  cmd->add_option("--op-timeout-ms", c->op_timeout_ms,
                  "deadline of one client op; past it the op is info (default: max(5000, pause + 2000))");
  cmd->add_option("--max-info", c->max_info,
                  "ops of unknown outcome one client may have before it stops (the run is then unknown)")
      ->capture_default_str();
  cmd->add_option("--stall-ms", c->stall_ms,
                  "no ok op for this long while no fault is in force ends the run as unknown "
                  "(default: max(10000, 2 × op timeout))");
  cmd->add_option("--time-limit", c->time_limit_s, "seconds of test (setup and checks come on top)")
      ->capture_default_str();
  cmd->add_option("--seed", c->seed, "seed of the generator and the nemesis schedule (default: random, recorded)");
  cmd->add_option("--store", c->store, "where runs are kept")->capture_default_str();
  cmd->add_option("--name", c->name, "test name (default: backend-workload-faults-resource)");
  cmd->add_option("--junit", c->junit, "also write the verdicts as JUnit XML to this file (a testcase per checker)");
  cmd->callback([c, cmd] {
    if (!c->replay.empty()) {
      for (const CLI::Option* o : cmd->get_options()) {
        const std::string name = o->get_name();
        if (o->count() > 0 && name != "--replay" && name != "--store" && name != "--name" && name != "--junit") {
          std::cerr << "fencecheck run: " << name
                    << " cannot be given with --replay, which takes every option from the run it replays\n";
          throw CLI::RuntimeError(3);
        }
      }
    }
    throw CLI::RuntimeError(run_test(*c, std::cout, std::cerr));
  });
}

}  // namespace fencecheck
