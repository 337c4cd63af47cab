#include "harness/suite/suite_command.h"

#include "harness/subcommand.h"

#include <iostream>
#include <map>
#include <memory>

#include "backends/registry.h"
#include "harness/run/run_store.h"
#include "harness/suite/suite_report.h"
#include "harness/suite/suite_runner.h"
#include "nemesis/fault_registry.h"
#include "platform/errors.h"
#include "platform/runtime_registry.h"

namespace fencecheck {

namespace fs = std::filesystem;

namespace {

struct SuiteArgs {
  int repeat = 1;
  std::string store = "results";
  std::uint64_t seed = 1;
  std::vector<std::string> only;                      // kleppmann
  std::vector<std::string> backends = {"redis"};      // matrix
  std::vector<std::string> faults = {"pause-holder"};  // matrix
  std::string workload = "lock-append", resource = "unfenced";
  double time_limit_s = 15;
  std::string junit;  // also write JUnit XML here
  std::string runtime;                                // passed to every run when set
  std::map<std::string, std::string> runtime_options;  // --docker-image, --nodes-file…: the same
};

void print_run(const SuiteRow& row, const SuiteRun& r) {
  std::cout << "[" << row.c.id << " " << row.runs.size() << "] " << r.verdict_text() << " in "
            << static_cast<int>(r.seconds) << " s";
  if (row.c.scenario != nullptr) std::cout << (r.verdict.as_expected ? " — as expected" : " — NOT as expected");
  for (const auto& m : r.verdict.mismatches) std::cout << "; " << m;
  if (!r.error.empty()) std::cout << "; " << r.error;
  if (!r.run_dir.empty()) std::cout << " (" << r.run_dir.string() << ")";
  std::cout << std::endl;
}

int run_and_report(std::vector<SuiteCase> cases, const SuiteArgs& a, const std::string& kind) {
  for (SuiteCase& c : cases) {
    if (!a.runtime.empty()) c.args.insert(c.args.end(), {"--runtime", a.runtime});
    for (const auto& [name, value] : a.runtime_options) {
      if (!value.empty()) c.args.insert(c.args.end(), {"--" + name, value});
    }
  }
  SuiteOptions o;
  o.exe = fs::read_symlink("/proc/self/exe");
  o.dir = create_stamped_dir(fs::path(a.store) / ("suite-" + kind));
  o.repeat = a.repeat;
  o.seed = a.seed;
  o.on_run = print_run;
  std::cout << "fencecheck suite " << kind << ": " << cases.size() << " case(s) × " << a.repeat << " in "
            << o.dir.string() << std::endl;
  SuiteResult result = run_suite(cases, o);
  write_suite_report(result, kind, o.dir);
  if (!a.junit.empty()) write_suite_junit(result, a.junit);
  // The table ends with the runs not as predicted and the summary line naming the one that
  // decided the exit code, so that the last lines of a CI log say which run to open.
  std::cout << "\nwrote " << (o.dir / "suite.md").string() << ", " << (o.dir / "suite.html").string() << ", "
            << (o.dir / "suite.json").string() << "\n\n"
            << suite_markdown(result, kind, o.dir) << std::flush;
  return suite_exit_code(result);
}

std::vector<SuiteCase> matrix_cases(const SuiteArgs& a) {
  std::vector<SuiteCase> cases;
  for (const auto& b : a.backends) {
    if (find_backend(b) == nullptr) throw std::invalid_argument("unknown backend \"" + b + "\"; backends: " + backend_names());
    for (const auto& f : a.faults) {
      if (f != "none" && find_fault(f) == nullptr) {
        throw std::invalid_argument("unknown fault \"" + f + "\"; faults: " + fault_names() + " (or none)");
      }
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", a.time_limit_s);
      cases.push_back({b + "-" + f, b + " × " + f, "",
                       {"--backend", b, "--nemesis", f, "--workload", a.workload, "--resource", a.resource,
                        "--time-limit", limit},
                       nullptr, b, f});
    }
  }
  return cases;
}

void add_common(CLI::App* cmd, SuiteArgs& a) {
  cmd->add_option("--repeat", a.repeat, "runs per case")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--store", a.store, "where the suite directory goes")->capture_default_str();
  cmd->add_option("--junit", a.junit, "also write JUnit XML here (a testsuite per case)");
  cmd->add_option("--seed", a.seed, "seed of the first run (run r of case k: seed + 1000 k + r)")
      ->capture_default_str();
  cmd->add_option("--runtime", a.runtime, "runtime of every run (" + runtime_names() + "; default: run's)");
  // Each runtime's own options (runtime_registry()), passed on to every run.
  for (const OptionSpec& spec : runtime_option_specs()) {
    cmd->add_option("--" + spec.name, a.runtime_options[spec.name], spec.help + " (every run)");
  }
}

// Runs body; a bad option (std::invalid_argument) or harness failure is exit 3 with its message.
[[noreturn]] void finish(const std::function<int()>& body) { finish_subcommand("suite", body); }

}  // namespace

void add_suite_command(CLI::App& app) {
  auto a = std::make_shared<SuiteArgs>();
  CLI::App* suite = app.add_subcommand("suite", "Run many tests and tabulate them: kleppmann (the article's "
                                                "scenarios), libraries (lock libraries), databases (locks in "
                                                "databases) or matrix (backends × faults)");
  suite->require_subcommand(1);
  for (const ScenarioTable& table : scenario_tables()) {
    CLI::App* t = suite->add_subcommand(table.name, table.description);
    add_common(t, *a);
    t->add_option("--only", a->only, "comma-separated scenario ids (" + scenario_ids(table.rows()) + ")")
        ->delimiter(',');
    t->callback([a, &table] {
      finish([a, &table] { return run_and_report(scenario_cases(table.rows(), a->only), *a, table.name); });
    });
  }
  CLI::App* m = suite->add_subcommand("matrix", "every backend × fault, each --repeat times");
  add_common(m, *a);
  m->add_option("--backends", a->backends, "comma-separated backends (" + backend_names() + ")")
      ->delimiter(',')->capture_default_str();
  m->add_option("--faults", a->faults, "comma-separated faults, one per column (or none)")
      ->delimiter(',')->capture_default_str();
  m->add_option("--workload", a->workload, "workload of every run")->capture_default_str();
  m->add_option("--resource", a->resource, "fenced or unfenced")->capture_default_str();
  m->add_option("--time-limit", a->time_limit_s, "seconds of each run")->capture_default_str();
  m->callback([a] { finish([a] { return run_and_report(matrix_cases(*a), *a, "matrix"); }); });
}

}  // namespace fencecheck
