// The scenario table and how a run's results are judged against it (label `unit`): every
// scenario is runnable as written (its options pass `fencecheck run`'s validation), and
// detection, false alarms and undecided runs are told apart.
#include "harness/suite/scenarios.h"
#include "harness/suite/suite_runner.h"

#include <gtest/gtest.h>

#include <set>

#include "adapters/registry.h"
#include "harness/suite/suite_report.h"

namespace fencecheck::testing {
namespace {

using nlohmann::json;

json results(json checkers, json valid = false) { return {{"valid", valid}, {"checkers", checkers}}; }
json verdict(json v) { return {{"valid", v}}; }

TEST(Scenarios, IdsAreUniqueAndEachHasAnExpectationAndAClaim) {
  std::set<std::string> ids;
  for (const auto& s : kleppmann_scenarios()) {
    EXPECT_TRUE(ids.insert(s.id).second) << s.id;
    EXPECT_FALSE(s.expect.empty()) << s.id;
    EXPECT_FALSE(s.claim.empty()) << s.id;
    for (const std::string& a : s.args) {
      EXPECT_NE(a, "--seed") << s.id << ": the suite sets the seed";
      EXPECT_NE(a, "--store") << s.id;
    }
  }
  for (const char* id : {"K1", "K2", "K3", "K4", "K5", "K6", "K7", "K8", "K9"}) {
    EXPECT_NE(find_scenario(id), nullptr) << id;
  }
  EXPECT_EQ(find_scenario("K10"), nullptr);
  EXPECT_TRUE(find_scenario("K8-control")->safe());
  EXPECT_TRUE(find_scenario("K5-fsync")->safe());
  EXPECT_FALSE(find_scenario("K5")->safe());
}

// Each scenario's arguments are checked as `fencecheck run` checks them, so that a typo or a
// value out of range fails here rather than in a CI run of the suite.
TEST(Scenarios, EveryScenarioIsAValidRun) {
  for (const auto& s : kleppmann_scenarios()) EXPECT_EQ(scenario_problem(s), std::nullopt);
}

TEST(Scenarios, APlannedScenarioShowsItsPlanAsItsFaults) {
  std::vector<SuiteCase> cases = scenario_cases(kleppmann_scenarios(), {"K3-exact", "K1"});
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].faults, "pause-holder");
  EXPECT_EQ(cases[1].faults, "plan k3-exact");
  // A plan that names a node the run does not have is the scenario's problem, named.
  Scenario changed = *find_scenario("K3-exact");
  changed.args = join_args(changed.args, {"--backend-opt", "n=3"});
  auto problem = scenario_problem(changed);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("node \"n4\" is not a server or client"), std::string::npos) << *problem;
}

// A matrix cell's arguments get the same check, so that `suite plan` refuses a cell no run
// would accept (exit 3 for every row otherwise, each retried by an engine in vain).
TEST(Scenarios, AnyCasesArgumentsAreCheckedAsARunWouldCheckThem) {
  const std::vector<std::string> cell = {"--backend", "redis", "--nemesis", "pause-holder", "--time-limit", "3"};
  auto problem = run_args_problem("redis-pause-holder", cell);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->rfind("redis-pause-holder: --pause-ms (3000 ms) must be shorter than --time-limit", 0), 0u)
      << *problem;
  EXPECT_EQ(run_args_problem("redis-pause-holder", join_args(cell, {"--pause-ms", "2000"})), std::nullopt);
  EXPECT_TRUE(run_args_problem("x", {"--backend", "nothing"}).has_value());
}

// The libraries' table: runnable, ids distinct from the article's, and every adapter of the
// registry has a row (adding a library means adding its row).
TEST(Scenarios, EveryLibraryScenarioIsAValidRunAndEveryAdapterHasOne) {
  std::set<std::string> ids, clients;
  for (const auto& s : kleppmann_scenarios()) ids.insert(s.id);
  for (const auto& s : library_scenarios()) {
    EXPECT_TRUE(ids.insert(s.id).second) << s.id;
    EXPECT_EQ(scenario_problem(s), std::nullopt);
    EXPECT_FALSE(s.claim.empty()) << s.id;
    for (std::size_t i = 0; i + 1 < s.args.size(); ++i) {
      if (s.args[i] == "--client") clients.insert(s.args[i + 1]);
    }
  }
  for (const AdapterInfo& a : adapter_registry()) EXPECT_TRUE(clients.contains(a.name)) << a.name << " has no row";
  EXPECT_NE(find_scenario("L2"), nullptr);
}

// Every table: its rows are valid runs with a claim, ids are distinct across tables (find_scenario
// and the integration tests' names take them as keys), and the databases' table exercises
// every lock kind and cluster of the mariadb backend.
TEST(Scenarios, EveryTableIsRunnableWithDistinctIdsAndTheDatabasesCoverEveryMariadbLock) {
  std::set<std::string> ids, names, mariadb_options;
  for (const ScenarioTable& table : scenario_tables()) {
    EXPECT_TRUE(names.insert(table.name).second) << table.name;
    EXPECT_FALSE(table.rows().empty()) << table.name;
    for (const auto& s : table.rows()) {
      EXPECT_TRUE(ids.insert(s.id).second) << s.id << " appears twice";
      EXPECT_EQ(scenario_problem(s), std::nullopt);
      EXPECT_FALSE(s.claim.empty()) << s.id;
      EXPECT_EQ(find_scenario(s.id), &s);
    }
  }
  for (const auto& s : database_scenarios()) {
    for (std::size_t i = 0; i + 1 < s.args.size(); ++i) {
      if (s.args[i] == "--backend-opt") mariadb_options.insert(s.args[i + 1]);
    }
  }
  for (const char* o : {"cluster=galera", "lock=named", "lock=lease", "lease=read-update", "lease=for-update",
                        "lease=conditional", "innodb_snapshot_isolation=ON"}) {
    EXPECT_TRUE(mariadb_options.contains(o)) << "no databases row runs " << o;
  }
  EXPECT_EQ(names, (std::set<std::string>{"kleppmann", "libraries", "databases", "stores"}));
}

TEST(Scenarios, AnUnknownOptionOrABadValueIsAProblemNamingTheScenarioAndTheOption) {
  Scenario s = kleppmann_scenarios().front();
  s.id = "Kx";
  struct Bad {
    std::vector<std::string> extra;
    std::string expected;
  };
  const std::vector<Bad> cases = {
      {{"--pause-msec", "100"}, "--pause-msec"},
      {{"--restart-ms", "soon"}, "--restart-ms: \"soon\" is not a whole number"},
      {{"--pause-ms", "100"}, "--pause-ms"},  // K1 gives it already: once only
      {{"--keys", "0"}, "--keys must be between 1 and 1000"},
      {{"--clock-min-ms", "6000", "--clock-max-ms", "5000"}, "--clock-min-ms must be between 0 and --clock-max-ms"},
      {{"--nemesis-targets", "most"}, "--nemesis-targets must be one of random, one, minority, majority, all"},
      {{"--model", "semaphore"}, "--model must be one of mutex"},
      {{"--nemesis", "pause-everything"}, "unknown fault \"pause-everything\""},
  };
  for (const auto& bad : cases) {
    Scenario changed = s;
    changed.args.insert(changed.args.end(), bad.extra.begin(), bad.extra.end());
    auto problem = scenario_problem(changed);
    ASSERT_TRUE(problem.has_value()) << bad.expected << " was accepted";
    EXPECT_EQ(problem->rfind("Kx: ", 0), 0u) << *problem;
    EXPECT_NE(problem->find(bad.expected), std::string::npos) << *problem;
  }
}

TEST(Scenarios, AnUnsafeScenarioIsDetectedOnlyWhenEveryExpectedViolationIsFound) {
  const Scenario& k1 = *find_scenario("K1");  // exclusion invalid, tokens valid, resource invalid
  auto both = judge_scenario(k1, results({{"exclusion", verdict(false)}, {"tokens", verdict(true)}, {"resource", verdict(false)}}));
  EXPECT_TRUE(both.detected);
  EXPECT_TRUE(both.as_expected);
  EXPECT_FALSE(both.false_alarm);
  auto half = judge_scenario(k1, results({{"exclusion", verdict(false)}, {"tokens", verdict(true)}, {"resource", verdict(true)}}));
  EXPECT_FALSE(half.detected);
  EXPECT_FALSE(half.as_expected);
  ASSERT_EQ(half.mismatches.size(), 1u);
  EXPECT_EQ(half.mismatches[0], "resource: expected invalid, got valid");
  auto none = judge_scenario(k1, results({{"tokens", verdict(true)}}, true));
  EXPECT_FALSE(none.detected);
  EXPECT_EQ(none.mismatches.size(), 2u) << "a missing checker is no detection";
}

TEST(Scenarios, ASafeScenarioRaisesAFalseAlarmOnlyWhenAnExpectedValidCheckerFails) {
  const Scenario& lease = *find_scenario("K7-lease");  // tokens valid, resource valid, exclusion any
  auto ok = judge_scenario(lease, results({{"exclusion", verdict(false)}, {"tokens", verdict(true)}, {"resource", verdict(true)}}));
  EXPECT_TRUE(ok.as_expected) << "exclusion may fail: only the fence is promised";
  EXPECT_FALSE(ok.false_alarm);
  auto stale = judge_scenario(lease, results({{"tokens", verdict(true)}, {"resource", verdict(false)}}));
  EXPECT_TRUE(stale.false_alarm);
  EXPECT_FALSE(stale.as_expected);
  auto skipped = judge_scenario(*find_scenario("K3-control"),
                                results({{"exclusion", verdict(true)}, {"resource", verdict("skipped")},
                                         {"linearizable", verdict(true)}}, true));
  EXPECT_TRUE(skipped.as_expected) << "skipped counts as valid";
}

TEST(Scenarios, AnUnknownRunOfASafeScenarioIsUndecidedNeverAPass) {
  json r = results({{"exclusion", verdict(true)}, {"resource", verdict(true)}, {"linearizable", verdict(true)}}, "unknown");
  r["unknown_reasons"] = {"worker on c2 died"};
  auto v = judge_scenario(*find_scenario("K3-control"), r);
  EXPECT_FALSE(v.as_expected);
  EXPECT_TRUE(v.undecided);
  EXPECT_FALSE(v.false_alarm);
  ASSERT_EQ(v.mismatches.size(), 1u);
  EXPECT_EQ(v.mismatches[0], "the run is unknown: worker on c2 died");
}

SuiteRun judged_run(const Scenario& s, const json& r) {
  SuiteRun run;
  run.results = r;
  run.verdict = judge_scenario(s, r);
  return run;
}

TEST(SuiteExitCode, ZeroAsExpectedOneBrokenTwoUndecidedThreeHarness) {
  const Scenario& k3c = *find_scenario("K3-control");
  json good = results({{"exclusion", verdict(true)}, {"resource", verdict(true)}, {"linearizable", verdict(true)}}, true);
  json bad = results({{"exclusion", verdict(false)}, {"resource", verdict(true)}, {"linearizable", verdict(true)}});
  json unknown = good;
  unknown["valid"] = "unknown";
  SuiteCase c{"K3-control", "", "", {}, &k3c, "redlock", "none"};
  SuiteResult suite{{{c, {judged_run(k3c, good)}}}, false};
  EXPECT_EQ(suite_exit_code(suite), 0);
  suite.rows[0].runs.push_back(judged_run(k3c, unknown));
  EXPECT_EQ(suite_exit_code(suite), 2);
  suite.rows[0].runs.push_back(judged_run(k3c, bad));
  EXPECT_EQ(suite_exit_code(suite), 1);
  suite.rows[0].runs.push_back(SuiteRun{});  // no results.json
  EXPECT_EQ(suite_exit_code(suite), 3);
  SuiteResult interrupted{{{c, {judged_run(k3c, good)}}}, true};
  EXPECT_EQ(suite_exit_code(interrupted), 2);
}

TEST(SuiteReport, TheTableCountsDetectionsAndFalseAlarmsAndTheMedianFirstViolation) {
  const Scenario& k1 = *find_scenario("K1");
  json hit = results({{"exclusion", verdict(false)}, {"tokens", verdict(true)}, {"resource", verdict(false)}});
  json miss = results({{"exclusion", verdict(false)}, {"tokens", verdict(true)}, {"resource", verdict(true)}});
  SuiteCase c{"K1", "t|itle", "claim", {}, &k1, "redis", "pause-holder"};
  SuiteRow row{c, {judged_run(k1, hit), judged_run(k1, hit), judged_run(k1, miss)}};
  row.runs[0].first_violation_s = 3.0;
  row.runs[1].first_violation_s = 1.0;
  row.runs[2].first_violation_s = 2.0;
  EXPECT_EQ(row.detected(), 2u);
  EXPECT_EQ(row.median_first_violation_s(), 2.0);
  std::string md = suite_markdown(SuiteResult{{row}, false}, "kleppmann", "/tmp");
  EXPECT_NE(md.find("| 2/3 |"), std::string::npos) << md;
  EXPECT_NE(md.find("resource invalid 2/3, resource valid 1/3"), std::string::npos) << md;
  EXPECT_NE(md.find("2.00 s"), std::string::npos) << md;
  EXPECT_NE(md.find("t\\|itle"), std::string::npos) << "a | in a cell is escaped";
  json j = suite_json(SuiteResult{{row}, false}, "kleppmann");
  EXPECT_EQ(j["rows"][0]["detected"], 2);
  EXPECT_EQ(j["exit_code"], 1);
}

// results.json of a run whose exclusion found violations of these classes, with notices.
json blamed(std::map<std::string, int> classes, int told = 0, std::int64_t median_ns = 0) {
  json e = verdict(false);
  e["blame"] = json::object();
  int count = 0;
  for (const auto& [name, n] : classes) {
    e["blame"][name] = n;
    count += n;
  }
  e["count"] = count;
  e["notice"] = {{"told", told}, {"silent", count - told}};
  if (told > 0) e["notice"]["median_latency_ns"] = median_ns;
  e["lost_notices"] = told;
  return results({{"exclusion", e}, {"tokens", verdict(true)}, {"resource", verdict(false)}});
}

TEST(Scenarios, EveryUnsafeKleppmannAndLibraryRowPredictsABlameAndNoSafeRowDoes) {
  for (const auto* table : {&kleppmann_scenarios(), &library_scenarios()}) {
    for (const Scenario& s : *table) {
      const auto e = s.expect.find("exclusion");
      const bool overlaps = e != s.expect.end() && e->second == Expect::kInvalid;
      EXPECT_EQ(!s.blame.empty(), overlaps) << s.id << ": a blame is predicted exactly when exclusion is expected invalid";
    }
  }
  EXPECT_EQ(find_scenario("K4")->blame, std::vector<Blame>{Blame::kGrantedExpired});
  EXPECT_EQ(find_scenario("L5")->blame, std::vector<Blame>{Blame::kSessionLost});
}

TEST(Scenarios, AViolationOfAnotherClassThanPredictedBreaksThePrediction) {
  const Scenario& k1 = *find_scenario("K1");  // overstayed
  EXPECT_TRUE(judge_scenario(k1, blamed({{"overstayed", 3}})).as_expected);
  auto off = judge_scenario(k1, blamed({{"overstayed", 3}, {"promise-broken", 1}}));
  EXPECT_FALSE(off.as_expected);
  EXPECT_TRUE(off.detected) << "the violations were found: only their blame is off";
  ASSERT_EQ(off.mismatches.size(), 1u);
  EXPECT_EQ(off.mismatches[0], "exclusion blame: predicted overstayed, got promise-broken 1 (overstayed 3)");
  EXPECT_EQ(off.broken, std::vector<std::string>{"exclusion"});
  auto unsaid = judge_scenario(k1, blamed({{"unclassified", 2}}));
  ASSERT_EQ(unsaid.mismatches.size(), 1u) << "a client that stopped saying its promise is caught";
  EXPECT_EQ(unsaid.mismatches[0], "exclusion blame: predicted overstayed, got unclassified 2");
  const Scenario& mixed = *find_scenario("K8-mutex");  // overstayed or granted-expired
  for (const std::string& m : judge_scenario(mixed, blamed({{"overstayed", 1}, {"granted-expired", 2}})).mismatches) {
    EXPECT_EQ(m.find("blame"), std::string::npos) << m;  // (its resource is expected valid: that one may differ)
  }
}

TEST(SuiteReport, TheBlameAndToldColumnsSumTheRuns) {
  const Scenario& k1 = *find_scenario("K1");
  SuiteCase c{"K1", "title", "claim", {}, &k1, "redis", "pause-holder"};
  SuiteRow row{c, {judged_run(k1, blamed({{"overstayed", 2}}, 1, 400'000'000)),
                   judged_run(k1, blamed({{"overstayed", 1}, {"promise-broken", 1}}, 2, 200'000'000))}};
  std::string md = suite_markdown(SuiteResult{{row}, false}, "kleppmann", "/tmp");
  EXPECT_NE(md.find("| overstayed 3, promise-broken 1 (predicted overstayed) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| told 3/4, median 0.20 s late; 3 lost notices |"), std::string::npos) << md;
  json j = suite_json(SuiteResult{{row}, false}, "kleppmann");
  EXPECT_EQ(j["rows"][0]["blame"], "overstayed 3, promise-broken 1 (predicted overstayed)");
  SuiteRow quiet{c, {judged_run(k1, results({{"exclusion", verdict(true)}}, true))}};
  std::string none = suite_markdown(SuiteResult{{quiet}, false}, "kleppmann", "/tmp");
  EXPECT_NE(none.find("| — (predicted overstayed) | — |"), std::string::npos) << none;
}

}  // namespace
}  // namespace fencecheck::testing
