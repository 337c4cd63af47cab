#include "harness/shrink/shrink_command.h"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>

#include "harness/option_schema.h"
#include "harness/subcommand.h"
#include "harness/run/replay.h"
#include "harness/run/run_store.h"
#include "harness/shrink/fault_units.h"
#include "harness/shrink/shrink.h"
#include "harness/suite/suite_runner.h"
#include "platform/atomic_file.h"
#include "platform/errors.h"
#include "platform/json_text.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// Where each candidate's first fault comes, and how long after its last line a try goes
// on: the violation a fault causes (a stale write after a resume) comes within it.
constexpr milliseconds kLeadIn{1000};
constexpr milliseconds kMargin{3000};

struct ShrinkArgs {
  std::string run_dir;
  int tries = 5;
  double budget_s = 600;
  std::string store = "results";
};

// The checkers a results.json found invalid.
std::set<std::string> failing_checkers(const nlohmann::json& results) {
  std::set<std::string> out;
  if (!results.is_object() || !results.contains("checkers") || !results["checkers"].is_object()) return out;
  for (const auto& [name, r] : results["checkers"].items()) {
    if (r.is_object() && r.value("valid", nlohmann::json()) == false) out.insert(name);
  }
  return out;
}

std::string joined(const std::set<std::string>& s) { return join({s.begin(), s.end()}, ", "); }

// Runs candidates as real runs of the stored configuration.
class RunReplayer final : public Replayer {
 public:
  RunReplayer(RunConfig original, std::vector<FaultUnit> units, std::set<std::string> failing, fs::path out)
      : original_(std::move(original)), units_(std::move(units)), failing_(std::move(failing)), out_(std::move(out)) {}

  TryOutcome try_once(const ShrinkCandidate& c, int attempt) override {
    const std::size_t n = tries_.size() + 1;
    RunConfig cfg = original_;
    cfg.opts.set("time-limit", c.length_s);
    cfg.plan.clear();
    cfg.nemesis.clear();
    if (!c.faults.empty()) {
      cfg.plan = (out_ / "candidates" / (std::to_string(n) + ".json")).string();
      fs::create_directories(fs::path(cfg.plan).parent_path());
      write_file_atomically(cfg.plan, dump_json(plan_of_units(units_, c.faults, kLeadIn), 2) + "\n");
    }
    SuiteCase one{"try-" + std::to_string(n), "", "", cfg.test_args(), nullptr, cfg.backend, ""};
    SuiteOptions o;
    o.exe = fs::read_symlink("/proc/self/exe");
    o.dir = out_ / "tries" / std::to_string(n);
    o.seed = original_.seed.value_or(1);
    SuiteResult result = run_suite({one}, o);
    if (result.interrupted) {
      interrupted = true;
      throw Interrupted("interrupted (Ctrl-C) during try " + std::to_string(n));
    }
    const SuiteRun& run = result.rows.at(0).runs.at(0);
    TryOutcome outcome{false, run.seconds, run.verdict_text()};
    if (run.results.is_null()) {  // one broken try says nothing; three in a row, the bench is broken
      outcome.verdict_note = "harness error: " + run.error;
      if (++harness_errors_in_a_row_ >= 3) throw HarnessError("3 tries in a row failed as a harness; the last: " + run.error);
      tries_.push_back({c, run.run_dir, false});
      return outcome;
    }
    harness_errors_in_a_row_ = 0;
    const std::set<std::string> now = failing_checkers(run.results);
    for (const auto& f : failing_) outcome.reproduced = outcome.reproduced || now.contains(f);
    // What each failing checker counted: exclusion's overlapped holds, not its acquires inside.
    for (const auto& f : now) {
      const nlohmann::json& c = run.results["checkers"][f];
      const int count = c.value("count", 0);
      const std::string counted = c.contains("count_text") ? c["count_text"].get<std::string>()
                                                           : std::to_string(count) + (count == 1 ? " violation" : " violations");
      outcome.verdict_note += "; " + f + ": " + counted;
    }
    std::cout << "[try " << n << "] " << c.faults.size() << " fault(s), " << std::fixed << std::setprecision(1)
              << c.length_s << " s, attempt "
              << attempt + 1 << ": " << outcome.verdict_note << (outcome.reproduced ? " — reproduced" : "") << " in "
              << static_cast<int>(run.seconds) << " s" << std::endl;
    tries_.push_back({c, run.run_dir, outcome.reproduced});
    return outcome;
  }

  bool interrupted = false;  // Ctrl-C reached a try: the search ended there

  // The run directory of the first try of `c` that reproduced; empty when none did.
  fs::path reproducing_run(const ShrinkCandidate& c) const {
    for (const auto& t : tries_) {
      if (t.candidate == c && t.reproduced) return t.run_dir;
    }
    return {};
  }

 private:
  struct Try {
    ShrinkCandidate candidate;
    fs::path run_dir;
    bool reproduced;
  };
  RunConfig original_;
  std::vector<FaultUnit> units_;
  std::set<std::string> failing_;
  fs::path out_;
  std::vector<Try> tries_;
  int harness_errors_in_a_row_ = 0;
};

int shrink_run(const ShrinkArgs& a) {
  RunConfig given;
  given.replay = a.run_dir;
  given.store = a.store;
  RunConfig original = replayed_config(given);
  original.replay.clear();
  original.resolve();
  nlohmann::json results;
  {
    std::ifstream in(fs::path(a.run_dir) / "results.json");
    results = nlohmann::json::parse(in, nullptr, false);
  }
  const std::set<std::string> failing = failing_checkers(results);
  if (failing.empty()) {
    throw InputError((fs::path(a.run_dir) / "results.json").string(), 0, "checkers",
                     "no checker found this run invalid: there is no failure to shrink");
  }
  std::vector<FaultUnit> units = group_fault_units(read_replay_lines(a.run_dir));
  const fs::path out = create_run_dir(a.store, original.name + "-shrink");
  std::cout << "fencecheck shrink: " << a.run_dir << ": " << joined(failing) << " invalid; " << units.size()
            << " fault(s) in " << original.opts.number("time-limit") << " s; search in " << out.string() << std::endl;

  ShrinkOptions o;
  o.tries = a.tries;
  o.budget_s = a.budget_s;
  // A shorter test must still outlast a pause (run_config refuses --pause-ms ≥ the length).
  o.min_length_s = std::max(2.0, static_cast<double>(original.opts.integer("pause-ms")) / 1000 + 1);
  o.fit_length = [&](const std::vector<std::size_t>& kept) {
    return std::max(o.min_length_s, fitted_length_s(units, kept, kLeadIn, kMargin));
  };
  o.length_floor = [&](const ShrinkCandidate& c) { return o.fit_length(c.faults); };
  RunReplayer replayer(original, units, failing, out);
  ShrinkResult r = shrink(units.size(), original.opts.number("time-limit"), replayer, o);

  nlohmann::json doc = r.to_json();
  doc["interrupted"] = replayer.interrupted;
  doc["run"] = fs::absolute(a.run_dir).string();
  doc["failing"] = failing;
  nlohmann::json described = nlohmann::json::array();
  for (std::size_t i = 0; i < units.size(); ++i) described.push_back(units[i].describe());
  doc["faults"] = described;
  const fs::path final_run = r.reproduced_any() ? replayer.reproducing_run(r.final_candidate) : fs::path();
  if (!final_run.empty()) {
    fs::copy(final_run, out, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    doc["final_run"] = final_run.string();
  }
  write_file_atomically(out / "shrink.json", dump_json(doc, 2) + "\n");
  if (!r.stopped_by.empty()) {
    std::cout << "fencecheck shrink: stopped early: " << r.stopped_by << "; the search so far is in "
              << (out / "shrink.json").string() << std::endl;
    return replayer.interrupted ? 2 : kExitHarnessOrInput;
  }
  if (final_run.empty()) {
    std::cout << "fencecheck shrink: "
              << (r.never_reproduced ? "the failure never came back in " + r.rate() + " replays of the whole run"
                                     : std::string("the budget ran out before any try reproduced the failure"))
              << "; the original stays the smallest known (" << a.run_dir << ")\nshrink.json: "
              << (out / "shrink.json").string() << std::endl;
    return 1;
  }
  std::cout << "fencecheck shrink: kept " << r.final_candidate.faults.size() << " of " << units.size()
            << " fault(s), " << r.final_candidate.length_s << " s; reproduced " << r.rate() << " times"
            << (r.budget_exhausted ? " (the budget ran out: the search stopped early)" : "") << "\n";
  for (std::size_t k : r.final_candidate.faults) std::cout << "  " << units[k].describe() << "\n";
  std::cout << "run: " << out.string() << " (rerun with " << (out / "repro.sh").string() << ")\nshrink.json: "
            << (out / "shrink.json").string() << std::endl;
  return 0;
}

}  // namespace

void add_shrink_command(CLI::App& app) {
  auto a = std::make_shared<ShrinkArgs>();
  CLI::App* cmd = app.add_subcommand(
      "shrink", "Find the smallest rerun of a failed run that still fails: fewer faults (ddmin), a shorter test");
  cmd->add_option("run_dir", a->run_dir, "a failed run's directory")->required();
  cmd->add_option("--tries", a->tries, "tries of each candidate (kept at its first reproduction), and for the final rate")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--budget", a->budget_s, "seconds of tries after which no new try starts")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--store", a->store, "where the shrunk run and its tries are kept")->capture_default_str();
  cmd->callback([a] { finish_subcommand("shrink", [&] { return shrink_run(*a); }); });
}

}  // namespace fencecheck
