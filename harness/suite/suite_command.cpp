#include "harness/suite/suite_command.h"

#include "harness/subcommand.h"

#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "backends/registry.h"
#include "harness/run/run_store.h"
#include "harness/suite/k8s_job.h"
#include "harness/suite/suite_report.h"
#include "harness/suite/suite_plan.h"
#include "harness/suite/suite_rows.h"
#include "harness/suite/suite_runner.h"
#include "platform/atomic_file.h"
#include "report/run_index.h"
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

void print_row(const PlanRow& row, const RowOutcome& o) {
  std::cout << "[" << row.c.id << " " << row.repeat << "] ";
  if (o.skipped) {
    std::cout << "stored already (rows/" << row.id << ")" << std::endl;
    return;
  }
  const SuiteRun& r = o.run;
  std::cout << r.verdict_text() << " in " << static_cast<int>(r.seconds) << " s";
  if (row.c.scenario != nullptr) std::cout << (r.verdict.as_expected ? " — as expected" : " — NOT as expected");
  for (const auto& m : r.verdict.mismatches) std::cout << "; " << m;
  if (!r.error.empty()) std::cout << "; " << r.error;
  if (!r.run_dir.empty()) std::cout << " (" << r.run_dir.string() << ")";
  std::cout << std::endl;
}

// Every case's run arguments with the suite's --runtime and runtime options added. Throws
// std::invalid_argument naming each case whose arguments no run would accept (a matrix
// cell whose pause needs a longer --time-limit, a fault the runtime cannot inject), before
// any row is planned or run: a row that cannot start would only fail its bench, and an
// engine would retry it in vain.
std::vector<SuiteCase> with_runtime(std::vector<SuiteCase> cases, const SuiteArgs& a) {
  for (SuiteCase& c : cases) {
    if (!a.runtime.empty()) c.args.insert(c.args.end(), {"--runtime", a.runtime});
    for (const auto& [name, value] : a.runtime_options) {
      if (!value.empty()) c.args.insert(c.args.end(), {"--" + name, value});
    }
  }
  std::string problems;
  for (const SuiteCase& c : cases) {
    if (auto p = run_args_problem(c.id, c.args)) problems += "\n  " + *p;
  }
  if (!problems.empty()) throw std::invalid_argument("cases that no run would accept:" + problems);
  return cases;
}

// The rows stored in dir (checked against plan when given) into suite.md, suite.html,
// suite.json, the store's run index and --junit; prints the table. Exit: 3 when rows are
// missing, duplicated or foreign (listed last), else suite_exit_code().
int collect_and_report(const fs::path& dir, const std::optional<std::vector<PlanRow>>& plan, const std::string& junit,
                       bool interrupted) {
  CollectResult c = collect_rows(dir, plan);
  c.result.interrupted = interrupted;
  write_suite_report(c.result, c.suite, dir);
  if (!junit.empty()) write_suite_junit(c.result, junit);
  if (fs::exists(dir / "runs")) write_run_index(dir / "runs");
  // The table ends with the runs not as predicted and the summary line naming the one that
  // decided the exit code, so that the last lines of a CI log say which run to open.
  std::cout << "\nwrote " << (dir / "suite.md").string() << ", " << (dir / "suite.html").string() << ", "
            << (dir / "suite.json").string() << "\n\n"
            << suite_markdown(c.result, c.suite, dir) << std::flush;
  if (interrupted || c.problems.empty()) return suite_exit_code(c.result);
  std::cout << "\nsuite collect: " << c.problems.size() << " problem(s) with the stored rows:\n";
  for (const std::string& p : c.problems) std::cout << "- " << p << "\n";
  std::cout << std::flush;
  return 3;
}

// `fencecheck suite <kind>`: its plan, every row run here one after another, then collected:
// the fanned-out commands' one code path, in one process.
int run_and_report(const std::vector<SuiteCase>& cases, const SuiteArgs& a, const std::string& kind) {
  const std::vector<PlanRow> plan = make_plan(kind, with_runtime(cases, a), a.repeat, a.seed);
  const fs::path dir = create_stamped_dir(fs::path(a.store) / ("suite-" + kind));
  write_file_atomically(dir / "plan.jsonl", plan_text(plan));
  std::cout << "fencecheck suite " << kind << ": " << cases.size() << " case(s) × " << a.repeat << " in "
            << dir.string() << std::endl;
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  const bool interrupted =
      for_each_until_stopped(plan.size(), [&](std::size_t i) { print_row(plan[i], run_row(plan[i], dir, exe)); });
  return collect_and_report(dir, plan, a.junit, interrupted);
}

// `suite run-row`: 0 a verdict stored (or stored already), 3 the bench failed, 4 the plan or
// index cannot be used (a retry would not help).
int run_one_row(const std::string& plan_file, std::size_t index, const std::string& store) {
  std::vector<PlanRow> plan;
  try {
    plan = read_plan(plan_file);
    if (index >= plan.size()) {
      throw std::invalid_argument("--index " + std::to_string(index) + ": the plan " + plan_file + " has rows 0.." +
                                  std::to_string(plan.size() - 1));
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "fencecheck suite run-row: " << e.what() << std::endl;
    return 4;
  }
  try {
    std::optional<RowOutcome> outcome;
    for_each_until_stopped(1, [&](std::size_t) { outcome = run_row(plan[index], store, fs::read_symlink("/proc/self/exe")); });
    if (!outcome) return 3;
    print_row(plan[index], *outcome);
    return outcome->stored ? 0 : 3;
  } catch (const std::exception& e) {
    std::cerr << "fencecheck suite run-row: " << e.what() << std::endl;
    return 3;
  }
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

// The options that say which runs a suite makes (its plan).
void add_plan_options(CLI::App* cmd, SuiteArgs& a) {
  cmd->add_option("--repeat", a.repeat, "runs per case")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", a.seed, "seed of the first run (run r of case k: seed + 1000 k + r)")
      ->capture_default_str();
  cmd->add_option("--runtime", a.runtime, "runtime of every run (" + runtime_names() + "; default: run's)");
  // Each runtime's own options (runtime_registry()), passed on to every run.
  for (const OptionSpec& spec : runtime_option_specs()) {
    cmd->add_option("--" + spec.name, a.runtime_options[spec.name], spec.help + " (every run)");
  }
}

void add_common(CLI::App* cmd, SuiteArgs& a) {
  add_plan_options(cmd, a);
  cmd->add_option("--store", a.store, "where the suite directory goes")->capture_default_str();
  cmd->add_option("--junit", a.junit, "also write JUnit XML here (a testsuite per case)");
}

void add_matrix_options(CLI::App* m, SuiteArgs& a) {
  m->add_option("--backends", a.backends, "comma-separated backends (" + backend_names() + ")")
      ->delimiter(',')->capture_default_str();
  m->add_option("--faults", a.faults, "comma-separated faults, one per column (or none)")
      ->delimiter(',')->capture_default_str();
  m->add_option("--workload", a.workload, "workload of every run")->capture_default_str();
  m->add_option("--resource", a.resource, "fenced or unfenced")->capture_default_str();
  m->add_option("--time-limit", a.time_limit_s, "seconds of each run")->capture_default_str();
}

// The cases of suite `kind`: a scenario table (its --only), or the matrix.
std::vector<SuiteCase> cases_of(const std::string& kind, const SuiteArgs& a) {
  if (kind == "matrix") return matrix_cases(a);
  for (const ScenarioTable& table : scenario_tables()) {
    if (table.name == kind) return scenario_cases(table.rows(), a.only);
  }
  std::string names;
  for (const ScenarioTable& table : scenario_tables()) names += table.name + ", ";
  throw std::invalid_argument("unknown suite \"" + kind + "\"; suites: " + names + "matrix");
}

// Runs body; a bad option (std::invalid_argument) or harness failure is exit 3 with its message.
[[noreturn]] void finish(const std::function<int()>& body) { finish_subcommand("suite", body); }

// `suite k8s-job`: the plan's rows as an Indexed Job and its collect step (harness/suite/k8s_job.h).
void add_k8s_job_command(CLI::App* suite, const std::shared_ptr<std::string>& plan_file) {
  auto o = std::make_shared<K8sJobOptions>();
  CLI::App* k8s = suite->add_subcommand(
      "k8s-job", "print Kubernetes manifests that run a plan's rows as an Indexed Job (a pod per row, one "
                 "store volume) and a suspended Job that collects them: … | kubectl create -f -");
  k8s->add_option("--plan", *plan_file, "the plan (suite plan's output)")->required();
  k8s->add_option("--image", o->image, "the fencecheck image (docker/) as the cluster pulls it")->required();
  k8s->add_option("--parallelism", o->parallelism, "pods at once")->required()->check(CLI::PositiveNumber);
  k8s->add_option("--pvc", o->pvc, "an existing ReadWriteMany claim for the store (default: make NAME-store)");
  k8s->add_option("--storage", o->storage, "the size of the claim made when --pvc is not given")
      ->capture_default_str();
  k8s->add_option("--storage-class", o->storage_class, "the storage class of that claim, one with ReadWriteMany "
                                                       "(default: the cluster's default class)");
  k8s->add_option("--store-path", o->store_path, "the suite's directory in the volume (default: "
                                                 "suite-SUITE/<UTC timestamp>, fresh each time)");
  k8s->add_option("--row-deadline", o->row_deadline_s, "seconds a row's pod may take before it is killed and "
                                                       "retried (default: 2 × the longest --time-limit + 900)");
  k8s->add_option("--name", o->name, "prefix of the objects' names (default: fencecheck-SUITE)");
  k8s->add_option("--retries", o->retries, "reruns of a row whose bench failed (backoffLimitPerIndex)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  k8s->callback([o, plan_file] {
    finish([o, plan_file] {
      // The ConfigMap carries the plan as read (each line checked), in plan.jsonl's form.
      const std::vector<PlanRow> plan = read_plan(*plan_file);
      if (o->store_path.empty()) o->store_path = "suite-" + plan.front().suite + "/" + utc_timestamp();
      std::cout << k8s_job_manifests(plan, plan_text(plan), *o) << std::flush;
      return 0;
    });
  });
}

}  // namespace

void add_suite_command(CLI::App& app) {
  auto a = std::make_shared<SuiteArgs>();
  // The scenario tables name themselves (scenario_tables()), then the matrix.
  std::string kinds;
  for (const ScenarioTable& table : scenario_tables()) kinds += table.name + " (" + table.title + "), ";
  CLI::App* suite = app.add_subcommand("suite", "Run many tests and tabulate them: " + kinds +
                                                    "or matrix (backends × faults)");
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
  add_matrix_options(m, *a);
  m->callback([a] { finish([a] { return run_and_report(matrix_cases(*a), *a, "matrix"); }); });

  // The row contract (harness/suite/suite_plan.h): plan, run-row, collect.
  auto kind = std::make_shared<std::string>();
  CLI::App* plan = suite->add_subcommand("plan", "print a suite's rows (one JSON line per case × repeat) for "
                                                 "run-row to run anywhere: fencecheck suite plan SUITE > plan.jsonl");
  plan->add_option("suite", *kind, "kleppmann, libraries, … (the suites above) or matrix")->required();
  add_plan_options(plan, *a);
  plan->add_option("--only", a->only, "comma-separated scenario ids of a scenario table")->delimiter(',');
  add_matrix_options(plan, *a);
  plan->callback([a, kind] {
    finish([a, kind] {
      std::cout << plan_text(make_plan(*kind, with_runtime(cases_of(*kind, *a), *a), a->repeat, a->seed))
                << std::flush;
      return 0;
    });
  });
  auto plan_file = std::make_shared<std::string>();
  auto index = std::make_shared<std::size_t>(0);
  CLI::App* row = suite->add_subcommand(
      "run-row", "run one row of a plan into a store (a row stored already is skipped); exit 0 when a verdict "
                 "is stored, 3 when none was (the bench failed or a signal cut the run short: run it again), 4 for a "
                 "plan or index it cannot use");
  row->add_option("--plan", *plan_file, "the plan (suite plan's output)")->required();
  row->add_option("--index", *index, "the row: its line in the plan, from 0 (default: $JOB_COMPLETION_INDEX, "
                                     "as a Kubernetes Indexed Job sets it)")
      ->envname("JOB_COMPLETION_INDEX")
      ->required();
  row->add_option("--store", a->store, "the suite's store directory, shared by every row")->required();
  row->callback([a, plan_file, index] { std::exit(run_one_row(*plan_file, *index, a->store)); });
  add_k8s_job_command(suite, plan_file);
  CLI::App* collect = suite->add_subcommand(
      "collect", "merge a store's rows into suite.md, suite.html, suite.json, the run index and --junit; exit 3 "
                 "when rows are missing, duplicated or from another plan");
  collect->add_option("--store", a->store, "the suite's store directory")->required();
  collect->add_option("--plan", *plan_file, "the plan the rows must match (default: the store's plan.jsonl, if any)");
  collect->add_option("--junit", a->junit, "also write JUnit XML here (a testsuite per case)");
  collect->callback([a, plan_file] {
    finish([a, plan_file] {
      fs::path file = plan_file->empty() ? fs::path(a->store) / "plan.jsonl" : fs::path(*plan_file);
      std::optional<std::vector<PlanRow>> plan;
      if (!plan_file->empty() || fs::exists(file)) plan = read_plan(file);
      return collect_and_report(a->store, plan, a->junit, false);
    });
  });
}

bool parsing_run_row(const CLI::App& app) {
  const CLI::App* suite = app.get_subcommand("suite");
  return suite->parsed() && suite->get_subcommand("run-row")->parsed();
}

}  // namespace fencecheck
