// The budget faults' probes (harness/budget/budget_faults.h) and how a probe's run is read
// (budget_prober.h), without running anything: every fault's plan is one the run's own plan
// reader accepts for the backend's nodes, the probe's run is set up around it, a refused
// fault names the run's own reason, and a try's results.json is classified as the search
// needs it (a violation breaks, an unknown run or a fault that never fired says nothing).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/budget/budget_command.h"
#include "harness/budget/budget_faults.h"
#include "harness/budget/budget_prober.h"
#include "harness/budget/budget_report.h"
#include "harness/subcommand.h"
#include "nemesis/plan.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class BudgetFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fc-budget-faults-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  RunConfig config(const std::string& backend, std::vector<std::string> backend_opts = {}) {
    RunConfig c;
    c.backend = backend;
    c.backend_opts = std::move(backend_opts);
    c.runtime = "netns";
    c.resolve();
    return c;
  }
  fs::path dir_;
};

TEST_F(BudgetFaultsTest, EveryFaultsPlanIsReadByThePlanReaderForEveryBackendsNodes) {
  for (const char* backend : {"redis", "redlock", "zookeeper", "etcd", "postgres"}) {
    const RunConfig base = config(backend);
    for (const BudgetFault& f : budget_faults()) {
      const std::string file = (dir_ / (f.name + ".json")).string();
      const RunConfig probe = probe_config(base, f, 1234, file);
      const auto [servers, clients] = plan_nodes(probe);
      const Plan plan = read_plan(file, servers, clients);  // throws InputError on a bad plan
      ASSERT_EQ(plan.steps.size(), 1u) << backend << " × " << f.name << ": one fault per probe";
      EXPECT_EQ(probe.plan, file);
      EXPECT_TRUE(probe.nemesis == plan.faults) << f.name << ": the run's faults are the plan's";
      EXPECT_GE(probe.opts.number("time-limit") * 1000, 1234) << f.name << ": the run outlasts the fault";
      EXPECT_EQ(probe.opts.integer("pause-ms"), 1234) << f.name;
      EXPECT_GE(probe.opts.integer("op-timeout-ms"), 1234 + 2000) << f.name << ": op deadlines outlast the pause";
    }
  }
}

TEST_F(BudgetFaultsTest, TheMagnitudeLandsInThePlanWhereTheFaultReadsIt) {
  const RunConfig base = config("redis");
  auto plan_of = [&](const char* fault, std::int64_t x) {
    probe_config(base, *find_budget_fault(fault), x, (dir_ / "p.json").string());
    std::ifstream in(dir_ / "p.json");
    return json::parse(in).at(0);
  };
  EXPECT_EQ(plan_of("pause-holder", 700)["for_ms"], 700);
  EXPECT_EQ(plan_of("pause-holder", 700)["on"], "acquire-ok");
  EXPECT_EQ(plan_of("partition-holder", 800)["for_ms"], 800);
  EXPECT_EQ(plan_of("partition-holder", 800)["grudge"]["holder"], json::array({"n1"}));
  EXPECT_EQ(plan_of("clock-bump-server", 900)["offsets"]["n1"], 900);
  EXPECT_EQ(plan_of("clock-bump-clients", 900)["offsets"].size(), 5u);
  EXPECT_EQ(plan_of("kill-server", 300)["for_ms"], 300);
  EXPECT_EQ(plan_of("kill-server", 0)["for_ms"], 1) << "0 would restart on the holder's own thread, pausing it";
  EXPECT_EQ(plan_of("pause-after-send", 600)["value"]["ms"], 600);
}

TEST_F(BudgetFaultsTest, AFaultThatTakesTheLockFromAHolderWithinItsLeaseHoldsForMostOfIt) {
  const RunConfig base = config("redis");
  const RunConfig kill = probe_config(base, *find_budget_fault("kill-server"), 500, (dir_ / "k.json").string());
  EXPECT_EQ(kill.opts.integer("hold-ms"), 800) << "4/5 of the 1000 ms lease";
  const RunConfig pause = probe_config(base, *find_budget_fault("pause-holder"), 500, (dir_ / "p.json").string());
  EXPECT_EQ(pause.opts.integer("hold-ms"), base.opts.integer("hold-ms")) << "a pause keeps the user's hold";
  const RunConfig cut = probe_config(base, *find_budget_fault("partition-holder"), 500, (dir_ / "c.json").string());
  EXPECT_EQ(cut.opts.integer("hold-min-ms"), 700) << "a cut holder works through the cut and 200 ms after";
  EXPECT_EQ(cut.opts.integer("hold-ms"), 700);
  EXPECT_FALSE(cut.problem().has_value() && cut.problem()->find("hold") != std::string::npos) << *cut.problem();
}

TEST_F(BudgetFaultsTest, TheLeaseIsTheSessionTimeoutWhereTheBackendSaysSo) {
  EXPECT_EQ(lease_ms(config("redis")), 1000);
  EXPECT_EQ(lease_ms(config("zookeeper", {"session_timeout_ms=3000"})), 3000);
  EXPECT_EQ(lease_ms(config("etcd")), 2000) << "etcd leases last lease_ttl_s (2 s); --ttl-ms bounds the wait";
  const BudgetSearchOptions o = profile_options(false, BreaksWhere::kAbove, 3000);
  EXPECT_EQ(o.hi, 9000);
  EXPECT_EQ(o.resolution, 300);
  EXPECT_EQ(profile_options(false, BreaksWhere::kBelow, 1000).hi, 2000) << "a restart delay: 2 leases";
  EXPECT_EQ(profile_options(true, BreaksWhere::kAbove, 1000).hi, 2000) << "quick: 2 leases";
  EXPECT_EQ(profile_options(true, BreaksWhere::kBelow, 1000).hi, 1000) << "quick, a restart delay: 1 lease";
  EXPECT_EQ(profile_options(true, BreaksWhere::kAbove, 1000).resolution, 250);
  EXPECT_TRUE(profile_options(true, BreaksWhere::kAbove, 1000).stop_at_first_break);
  EXPECT_FALSE(o.stop_at_first_break) << "full: every try, for the rate plot";
}

TEST_F(BudgetFaultsTest, ARefusedFaultNamesTheRunsOwnReason) {
  RunConfig local = config("redis");
  local.runtime = "local";
  const auto why = budget_fault_problem(local, *find_budget_fault("partition-holder"));
  ASSERT_TRUE(why.has_value()) << "the local runtime cuts no links";
  EXPECT_NE(why->find("partition"), std::string::npos) << *why;
  const auto after_send = budget_fault_problem(config("redis"), *find_budget_fault("pause-after-send"));
  ASSERT_TRUE(after_send.has_value()) << "the native client cannot pause inside itself";
  EXPECT_NE(after_send->find("pause-after-send"), std::string::npos) << *after_send;
}

TEST(BudgetRange, IsParsedOrRefusedByName) {
  EXPECT_EQ(parse_range("0:3000"), (std::pair<std::int64_t, std::int64_t>(0, 3000)));
  for (const char* bad : {"3000", "5:5", "9:1", "-1:5", "a:5", "1:", ":4"}) {
    try {
      parse_range(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--range"), std::string::npos) << e.what();
    }
  }
}

json results(json exclusion_valid, json run_valid = true) {
  return {{"valid", run_valid},
          {"checkers", {{"exclusion", {{"valid", exclusion_valid}}}, {"resource", {{"valid", true}}}}},
          {"health", {{"plan", {{"steps", 1}, {"fired", 1}}}}}};
}

TEST(ClassifyTry, AViolationBreaksAndAnythingUnsaidIsUndecided) {
  std::string why;
  EXPECT_EQ(classify_try(results(true), {"exclusion"}, why), ProbeTry::Result::kSafe);
  EXPECT_EQ(classify_try(results(false, false), {"exclusion"}, why), ProbeTry::Result::kBroke);
  EXPECT_EQ(classify_try(results(false, "unknown"), {"exclusion"}, why), ProbeTry::Result::kBroke)
      << "a violation is evidence even when the bench had trouble too";
  EXPECT_EQ(classify_try(results(true, "unknown"), {"exclusion"}, why), ProbeTry::Result::kUndecided);
  EXPECT_EQ(classify_try(results("unknown"), {"exclusion"}, why), ProbeTry::Result::kUndecided);
  EXPECT_EQ(classify_try(results(true), {"tokens"}, why), ProbeTry::Result::kUndecided) << "no verdict of the watched";
  json unfired = results(true);
  unfired["health"]["plan"]["fired"] = 0;
  why.clear();
  EXPECT_EQ(classify_try(unfired, {"exclusion"}, why), ProbeTry::Result::kUndecided);
  EXPECT_NE(why.find("never fired"), std::string::npos) << why;
  json other = results(true, false);
  other["checkers"]["resource"]["valid"] = false;
  EXPECT_EQ(classify_try(other, {"exclusion"}, why), ProbeTry::Result::kSafe) << "an unwatched checker's violation";
  EXPECT_EQ(classify_try(other, {"exclusion", "resource"}, why), ProbeTry::Result::kBroke);
}

TEST(TryDetail, KeepsTheVerdictsClassesNoticesAndLatencies) {
  json r = results(false, false);
  r["checkers"]["exclusion"]["blame"] = {{"overstayed", 2}, {"promise-broken", 0}};
  r["checkers"]["exclusion"]["notice"] = {{"told", 1}, {"silent", 1}};
  r["checkers"]["exclusion"]["violations"] = {{{"blame", {{"notice_latency", 12'000'000}}}}, {{"blame", json::object()}}};
  const json d = try_detail(r);
  EXPECT_EQ(d["verdict"], false);
  EXPECT_EQ(d["checkers"]["exclusion"], false);
  EXPECT_EQ(d["checkers"]["resource"], true);
  EXPECT_EQ(d["classes"], json({{"overstayed", 2}}));
  EXPECT_EQ(d["notice"]["told"], 1);
  EXPECT_EQ(d["notice_latencies_ms"], json::array({12.0}));
}

}  // namespace
}  // namespace fencecheck

namespace fencecheck {
namespace {

TEST(ClassifyTry, OnlyAValidVerdictOfARunWhosePlanFiredIsSafe) {
  std::string why;
  json skipped = results(true);
  skipped["checkers"]["exclusion"]["valid"] = "skipped";
  EXPECT_EQ(classify_try(skipped, {"exclusion"}, why), ProbeTry::Result::kUndecided) << "nothing judged is not safe";
  json no_plan = results(true);
  no_plan.erase("health");
  EXPECT_EQ(classify_try(no_plan, {"exclusion"}, why), ProbeTry::Result::kUndecided) << "a run without its plan";
}

TEST_F(BudgetFaultsTest, AFaultTookEffectOnlyWhenItsLineSaysSoWithoutNotApplied) {
  const BudgetFault& after_send = *find_budget_fault("pause-after-send");
  auto history = [&](const std::string& lines) {
    std::ofstream(dir_ / "history.jsonl") << lines;
    return fault_took_effect(after_send, dir_);
  };
  const std::string arm = R"({"process":"nemesis","type":"info","f":"arm","value":{"fault":"pause-after-send","ms":5}})" "\n";
  const std::string client = R"({"process":1,"type":"invoke","f":"acquire","key":"l0"})" "\n";
  EXPECT_FALSE(history(arm + client)) << "armed, never taken";
  EXPECT_FALSE(history(arm + R"({"process":"nemesis","type":"info","f":"pause","value":{"fault":"pause-after-send","not_applied":"came back without pausing"}})" "\n"));
  EXPECT_TRUE(history(arm + client + R"({"process":"nemesis","type":"info","f":"pause","value":{"fault":"pause-after-send","targets":["c2"],"ms":5}})" "\n"));
  fs::remove(dir_ / "history.jsonl");
  EXPECT_FALSE(fault_took_effect(after_send, dir_)) << "no history";
  const BudgetFault& cut = *find_budget_fault("partition-holder");
  std::ofstream(dir_ / "history.jsonl") << R"({"process":"nemesis","f":"partition","value":{"grudge":{"c1":["n1"]},"not_cut":{"n1":"timeout"}}})" "\n";
  EXPECT_FALSE(fault_took_effect(cut, dir_));
}

TEST_F(BudgetFaultsTest, ReproShIsTheSameCommandWithItsSeed) {
  write_command_repro(dir_, {"budget", "--fault", "pause-holder", "--range", "0:3000"}, 42);
  std::ifstream in(dir_ / "repro.sh");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("'budget' '--fault' 'pause-holder' '--range' '0:3000' '--seed' '42'"), std::string::npos) << text;
  EXPECT_TRUE((fs::status(dir_ / "repro.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
  write_command_repro(dir_, {"budget", "--seed", "7"}, 42);
  std::ifstream again(dir_ / "repro.sh");
  const std::string seeded((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_EQ(seeded.find("'42'"), std::string::npos) << "a seed given is kept, not doubled: " << seeded;
}

TEST(BudgetExitCode, InterruptedTwoABrokenBenchThreeElseTheSearchs) {
  BudgetResult r;
  r.outcome = BudgetResult::Outcome::kBoundary;
  r.safe_at = 900;
  r.broken_at = 1000;
  EXPECT_EQ(budget_exit_code(r, false), 0);
  EXPECT_EQ(budget_exit_code(r, true), 2) << "the user stopped it, bracket or not";
  r.stopped_by = "cannot write budget.json";
  EXPECT_EQ(budget_exit_code(r, false), 3) << "a stop that was not the budget or Ctrl-C is the bench's";
  r.stopped_by.clear();
  r.outcome = BudgetResult::Outcome::kUndecided;
  r.probes = {Probe{.magnitude = 5, .tries = {{ProbeTry::Result::kHarnessError, 1, {}}}, .verdict = Probe::Verdict::kUndecided}};
  EXPECT_EQ(budget_exit_code(r, false), 3) << "its last probe's only try failed as a harness";
  r.probes[0].tries.push_back({ProbeTry::Result::kUndecided, 1, {}});
  EXPECT_EQ(budget_exit_code(r, false), 2) << "an unknown run: undecided";
}

}  // namespace
}  // namespace fencecheck
