// Kleppmann's scenarios ("How to do distributed locking", 2016, and antirez's reply), as
// fencecheck runs with the verdicts the argument predicts. One table serves the
// integration tests (each scenario once, a fixed seed) and `fencecheck suite kleppmann`
// (each N times). A scenario is `fencecheck run` options plus an expectation per checker;
// adding one is one entry in scenarios.cpp.
//
// Immutable once built; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/blame.h"

namespace fencecheck {

enum class Expect { kValid, kInvalid, kAny };
std::string_view to_string(Expect e);  // "valid", "invalid", "any"

struct Scenario {
  std::string id;     // "K3"
  std::string title;  // one line: the system and the fault
  std::string claim;  // what the article (or antirez) says happens, and why
  std::vector<std::string> args;  // `fencecheck run` options, without --seed/--store/--name
  std::map<std::string, Expect> expect;  // checker -> verdict; a checker not named: any
  // The blame the argument predicts for its exclusion violations (docs/checkers.md): every
  // violation's class must be one of these; empty: no prediction (a safe row, or a mix no
  // one can say in advance).
  std::vector<Blame> blame = {};
  // Why the integration tests (one run each, in CI) leave this row out: its prediction is
  // met in too few runs to ask it of one (the measured rate). Empty: it runs in CI.
  std::string not_in_ci = "";
  // True when no checker is expected invalid: a run of it that finds a violation is a
  // false alarm, and detection is meaningless.
  bool safe() const;
};

// The scenario tables' shorthand (scenarios.cpp, library_scenarios.cpp).
namespace scenario_table {
using Args = std::vector<std::string>;
inline constexpr Expect V = Expect::kValid;
inline constexpr Expect I = Expect::kInvalid;
inline constexpr Blame kGrantedExpired = Blame::kGrantedExpired;
inline constexpr Blame kPromiseBroken = Blame::kPromiseBroken;
inline constexpr Blame kOverstayed = Blame::kOverstayed;
inline constexpr Blame kSessionLost = Blame::kSessionLost;
}  // namespace scenario_table

// a then b: how a scenario table composes its argument lists.
inline std::vector<std::string> join_args(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<Scenario>& kleppmann_scenarios();
// The lock libraries' rows (`fencecheck suite libraries`, library_scenarios.cpp): a claim is
// what the library's documentation promises, an expectation what its bug reports predict.
const std::vector<Scenario>& library_scenarios();
// The databases' rows (`fencecheck suite databases`, database_scenarios.cpp): locks taken in
// a database teams already run (MariaDB named locks and lease tables, standalone and Galera).
const std::vector<Scenario>& database_scenarios();
// The stores' rows (`fencecheck suite stores`, store_scenarios.cpp): key-value stores whose
// own version is the fencing token (NATS JetStream KV).
const std::vector<Scenario>& store_scenarios();

// Every scenario table, each a `fencecheck suite` subcommand of its name: declared once here,
// the command line, find_scenario and the integration tests follow.
struct ScenarioTable {
  std::string name;         // "kleppmann": the subcommand
  std::string description;  // its help
  std::string title;        // what its suite.md and suite.html are headed with, after its name
  const std::vector<Scenario>& (*rows)();
};
const std::vector<ScenarioTable>& scenario_tables();
// Whether s.args make a valid `fencecheck run` anywhere: parsed exactly as `run` parses
// them (harness/run/run_command.h) and checked against the option declarations and the
// rules between options, without what depends on this machine. nullopt when they do; else
// "K3: --clock-min-ms …", naming the scenario and the option.
std::optional<std::string> scenario_problem(const Scenario& s);
// The same for any case's arguments (a matrix cell's): "redis-pause-holder: --pause-ms …".
std::optional<std::string> run_args_problem(const std::string& id, const std::vector<std::string>& args);
const Scenario* find_scenario(std::string_view id);  // any table; nullptr when unknown
std::string scenario_ids(const std::vector<Scenario>& table = kleppmann_scenarios());  // "K1, K2, …"

// How one run's results.json compares with a scenario's expectations.
struct ScenarioVerdict {
  bool as_expected = false;  // every named checker has its expected verdict
  bool detected = false;     // unsafe: every checker expected invalid is invalid
  bool false_alarm = false;  // safe: some checker is invalid
  bool undecided = false;    // the run is unknown (bench problem, budget) and not invalid
  std::vector<std::string> mismatches;  // "exclusion: expected invalid, got valid"
  // broken[i] is the checker of mismatches[i] ("exclusion"); a last mismatch saying the run
  // is unknown has none. What names the checker that broke a prediction in the suite's output.
  std::vector<std::string> broken;
};
// results: a results.json document. A checker's "skipped" counts as valid (docs/checkers.md).
// A scenario that predicts a blame is off its prediction when any exclusion violation is
// of another class (a mismatch naming the classes seen).
ScenarioVerdict judge_scenario(const Scenario& s, const nlohmann::json& results);

// The exclusion checker's violations per blame class in a results.json ({"overstayed": 3});
// empty without violations or without blame (a history from before issue 29).
std::map<std::string, std::uint64_t> blame_counts(const nlohmann::json& results);
// "overstayed or granted-expired"
std::string blame_names_of(const std::vector<Blame>& blames);

}  // namespace fencecheck
