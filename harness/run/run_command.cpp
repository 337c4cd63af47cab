#include "harness/run/run_command.h"

#include <iostream>
#include <memory>

#include "backends/registry.h"
#include "harness/run/runner.h"
#include "nemesis/fault_registry.h"
#include "nemesis/plan.h"
#include "nemesis/plan_actions.h"
#include "platform/runtime_registry.h"
#include "workloads/workload.h"

namespace fencecheck {
namespace {

// "where the nodes run: local (…), netns (…); default: netns as root, else local"
std::string runtime_help() {
  std::string h = "where the nodes run:";
  for (const RuntimeInfo& r : runtime_registry()) h += " " + r.name + " (" + r.description + ");";
  return h + " default: netns as root, else local";
}

}  // namespace

void add_run_options(CLI::App& cmd, RunArgs& args, const OptionSchema& schema) {
  RunConfig& c = args.config;
  cmd.add_option("--backend", c.backend, "lock service under test: " + backend_names())->capture_default_str();
  cmd.add_option("--backend-opt", c.backend_opts,
                 "key=value option of the backend (repeatable), e.g. persistence=always for redis");
  cmd.add_option("--client-opt", c.client_opts,
                 "key=value option of the --client adapter (repeatable), e.g. lost_on=lost for kazoo "
                 "(fencecheck adapters lists each adapter's)");
  cmd.add_option("--workload", c.workload, "what clients do: " + workload_names())->capture_default_str();
  cmd.add_option("--nemesis", c.nemesis, "comma-separated faults (" + fault_names() + ") or none")
      ->delimiter(',')
      ->capture_default_str();
  cmd.add_option("--resource", c.resource, "fenced: the resource refuses stale tokens; unfenced: accepts all")
      ->capture_default_str();
  cmd.add_option("--runtime", c.runtime, runtime_help());
  schema.add_cli(cmd, args.typed);
  cmd.add_option("--plan", c.plan,
                 "apply the faults of a written plan instead of drawing them: a JSON list of steps, each a "
                 "trigger (at_ms, after_ms, or on acquire-ok/release) and an action (" + plan_action_names() +
                     ") (docs/plans.md); or a shipped plan's name (" + shipped_plan_names() + ")");
  cmd.add_option("--replay", c.replay,
                 "rerun a stored run: its config.json, and its recorded faults at the same offsets "
                 "(only --store, --name and --junit may be given with it)");
  cmd.add_option("--seed", c.seed, "seed of the generator and the nemesis schedule (default: random, recorded)");
  cmd.add_option("--store", c.store, "where runs are kept")->capture_default_str();
  cmd.add_option("--name", c.name, "test name (default: backend-workload-faults-resource)");
  cmd.add_option("--junit", c.junit, "also write the verdicts as JUnit XML to this file (a testcase per checker)");
}

RunConfig parse_run_args(const std::vector<std::string>& args, const OptionSchema& schema) {
  CLI::App app;
  RunArgs parsed;
  parsed.config.opts = schema.defaults();
  add_run_options(app, parsed, schema);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a vector from its back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(e.what());
  }
  parsed.finish(schema);
  return parsed.config;
}

void add_run_command(CLI::App& app, const OptionSchema& schema) {
  auto args = std::make_shared<RunArgs>();
  args->config.opts = schema.defaults();
  CLI::App* cmd = app.add_subcommand("run", "Run a test: real servers, clients, faults, then the checkers");
  add_run_options(*cmd, *args, schema);
  cmd->callback([args, cmd, &schema] {
    if (!args->config.replay.empty()) {
      for (const CLI::Option* o : cmd->get_options()) {
        const std::string name = o->get_name();
        if (o->count() > 0 && name != "--replay" && name != "--store" && name != "--name" && name != "--junit") {
          std::cerr << "fencecheck run: " << name
                    << " cannot be given with --replay, which takes every option from the run it replays\n";
          throw CLI::RuntimeError(3);
        }
      }
    }
    if (cmd->count("--plan") > 0 && cmd->count("--nemesis") > 0) {
      std::cerr << "fencecheck run: --nemesis cannot be given with --plan, whose steps are the run's faults\n";
      throw CLI::RuntimeError(3);
    }
    try {
      args->finish(schema);
    } catch (const std::invalid_argument& e) {
      std::cerr << "fencecheck run: " << e.what() << "\n";
      throw CLI::RuntimeError(3);
    }
    throw CLI::RuntimeError(run_test(args->config, std::cout, std::cerr));
  });
}

}  // namespace fencecheck
