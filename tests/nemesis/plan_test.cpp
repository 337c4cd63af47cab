// Fault plans: read_plan() refuses every kind of bad plan with the file, the step's line
// and number and the field; PlanCursor turns steps into the families' lines in order, on
// time or on the lock event they wait for; NemesisSchedule applies them (a lock event's
// step on the caller's thread, before it returns). ManualTime and a recording env: no
// test sleeps.
#include "nemesis/fault_registry.h"
#include "nemesis/plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "nemesis/plan_cursor.h"
#include "nemesis/schedule.h"
#include "platform/errors.h"
#include "tests/nemesis/fake_env.h"
#include "tests/nemesis/node_names.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;
namespace fs = std::filesystem;


std::string write_plan(const std::string& text) {
  static int n = 0;
  fs::path p = fs::temp_directory_path() / ("fc-plan-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".json");
  std::ofstream(p) << text;
  return p.string();
}

// Reads `text` as a plan file, which is removed again whatever read_plan() says.
Plan plan_of(const std::string& text) {
  const std::string file = write_plan(text);
  struct Remove {
    std::string file;
    ~Remove() { fs::remove(file); }
  } remove{file};
  return read_plan(file, kFiveServers, kTwoClients);
}

// The message read_plan() gives for a plan, or "" when it accepts it.
std::string refusal(const std::string& text) {
  try {
    plan_of(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PlanRead, AcceptsEveryTriggerAndActionAndListsTheirFaults) {
  Plan p = plan_of(R"([
    {"at_ms": 100, "do": "cut", "grudge": {"c1": ["n4", "n5"]}},
    {"on": "acquire-ok", "client": "c1", "key": "l0", "do": "clock", "offsets": {"n3": 30000}},
    {"after_ms": 0, "do": "pause", "node": "holder", "for_ms": 200},
    {"on": "release", "client": "holder", "do": "heal-cut"},
    {"after_ms": 10, "do": "clock-reset"},
    {"after_ms": 10, "do": "kill", "nodes": ["n1", "n2"], "for_ms": 100},
    {"after_ms": 10, "do": "restart", "nodes": ["n3"]},
    {"after_ms": 10, "do": "kill", "nodes": ["holder"]}
  ])");
  ASSERT_EQ(p.steps.size(), 8u);
  EXPECT_EQ(p.steps[1].trigger, PlanTrigger::kOnEvent);
  EXPECT_EQ(p.steps[1].key, "l0");
  EXPECT_EQ(p.steps[2].fault, "pause-client");
  EXPECT_EQ(p.steps[5].fault, "kill-server");
  EXPECT_EQ(p.steps[7].fault, "kill-client");
  EXPECT_EQ(p.steps[3].line, 5u) << "the line where the step begins";
  EXPECT_EQ(p.faults, (std::vector<std::string>{"clock-bump", "clock-reset", "kill-client", "kill-server",
                                                "partition-nodes", "pause-client", "restart-server"}));
}

TEST(PlanRead, RefusesBadPlansNamingFileLineStepAndField) {
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"not json", "not JSON"},
      {"{}", "a plan is a JSON list"},
      {"[]", "no steps"},
      {"[\n{\"do\": \"cut\", \"grudge\": {\"c1\": [\"n4\"]}}]", ":2: step 1: needs exactly one trigger"},
      {"[{\"at_ms\": 1, \"after_ms\": 2, \"do\": \"heal-cut\"}]", "needs exactly one trigger"},
      {"[{\"at_ms\": -1, \"do\": \"clock-reset\"}]", "field 'at_ms'"},
      {"[{\"at_ms\": 0, \"do\": \"cutt\"}]", "field 'do': step 1: unknown action \"cutt\""},
      {"[{\"at_ms\": 0, \"do\": \"cut\", \"grudge\": {\"c1\": [\"n9\"]}}]", "node \"n9\" is not a server or client"},
      {"[{\"at_ms\": 0, \"do\": \"cut\", \"grudge\": {\"c1\": [\"n4\"]}, \"color\": 1}]", "field 'color'"},
      {"[{\"at_ms\": 0, \"do\": \"cut\"}]", "field 'grudge': step 1: is missing"},
      {"[{\"at_ms\": 0, \"do\": \"cut\", \"grudge\": {\"c1\": [\"c1\"]}}]", "cut from itself"},
      {"[{\"at_ms\": 0, \"do\": \"pause\", \"node\": \"holder\", \"for_ms\": 5}]", "no step before it waits for a lock event"},
      {"[{\"at_ms\": 0, \"do\": \"heal-cut\"}]", "nothing|no cut"},
      {"[{\"at_ms\": 0, \"do\": \"clock-reset\"}]", "no clock step comes before it"},
      {"[{\"at_ms\": 0, \"do\": \"cut\", \"grudge\": {\"c1\": [\"n4\"]}, \"for_ms\": 5},\n"
       " {\"at_ms\": 9, \"do\": \"heal-cut\"},\n\n {\"at_ms\": 9, \"do\": \"heal-cut\"}]",
       ":4: field 'do': step 3: heal-cut, but no cut"},
      {"[\n  {\"at_ms\": 0,\n   \"do\": \"pause\", \"node\": \"c1\", \"for_ms\": 5},\n  {\"after_ms\": 0, \"do\": \"nap\"}\n]",
       ":4: field 'do': step 2: unknown action"},
      {"[\n  {\"at_ms\": 0, \"do\": \"clock-reset\",}\n]", ":2: not JSON"},
      {"[{\"at_ms\": 86400001, \"do\": \"heal-cut\"}]", "from 0 to 86400000"},
      {"[{\"at_ms\": 0, \"do\": \"pause\", \"node\": \"c1\"}]", "field 'for_ms'"},
      {"[{\"at_ms\": 0, \"do\": \"kill\", \"nodes\": [\"n1\", \"c1\"]}]", "must all be servers or all be clients"},
      {"[{\"at_ms\": 0, \"do\": \"restart\", \"nodes\": [\"c1\"]}]", "not a server"},
      {"[{\"at_ms\": 0, \"do\": \"restart\", \"nodes\": [\"n1\"], \"for_ms\": 3}]", "takes no for_ms"},
      {"[{\"on\": \"acquire-ok\", \"client\": \"n1\", \"do\": \"clock\", \"offsets\": {\"n1\": 5}}]",
       "\"n1\" is not a client"},
      {"[{\"on\": \"acquired\", \"client\": \"c1\", \"do\": \"clock\", \"offsets\": {\"n1\": 5}}]", "field 'on'"},
      {"[{\"on\": \"release\", \"do\": \"clock\", \"offsets\": {\"n1\": 5}}]", "field 'client'"},
      {"[{\"at_ms\": 0, \"client\": \"c1\", \"do\": \"clock\", \"offsets\": {\"n1\": 5}}]", "belongs to an \"on\""},
      {"[{\"on\": \"release\", \"client\": \"c1\", \"do\": \"clock\", \"offsets\": {\"holder\": 5}}]",
       "cannot name \"holder\" here"},
      {R"([{"at_ms": 0, "do": "replay", "f": "pause", "value": {"fault": "pause-server", "targets": ["n9"], "ms": 5}}])",
       "field 'value': step 1: node \"n9\" is not a server"},
      {R"([{"at_ms": 0, "do": "replay", "f": "pause", "value": {"fault": "pause-nothing"}}])", "unknown fault"},
      {R"([{"at_ms": 0, "do": "replay", "f": "explode", "value": {"fault": "pause-server"}}])", "cannot replay \"explode\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string why = refusal(c.text);
    ASSERT_FALSE(why.empty()) << "accepted";
    EXPECT_NE(why.find(".json:"), std::string::npos) << why;
    bool found = false;
    std::size_t start = 0;
    for (std::size_t bar; start <= c.expect.size(); start = bar + 1) {  // "a|b": either
      bar = c.expect.find('|', start);
      if (bar == std::string::npos) bar = c.expect.size();
      found = found || why.find(c.expect.substr(start, bar - start)) != std::string::npos;
    }
    EXPECT_TRUE(found) << why;
  }
  EXPECT_NE(refusal("[]").find("no steps"), std::string::npos);
  try {
    read_plan("/nonexistent/plan.json", kFiveServers, kTwoClients);
    ADD_FAILURE() << "read a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the plan file"), std::string::npos);
  }
}

TEST(PlanCursor, TimedStepsComeInOrderAndAfterCountsFromTheLastApplied) {
  Plan p = plan_of(R"([{"at_ms": 100, "do": "cut", "grudge": {"c1": ["n4"]}},
                       {"after_ms": 50, "do": "heal-cut"}])");
  const TimeSource::Instant t0{};
  PlanCursor cursor(p, t0);
  EXPECT_TRUE(cursor.due(t0 + milliseconds(99)).empty());
  auto first = cursor.due(t0 + milliseconds(100));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].f, "partition");
  EXPECT_EQ(first[0].value["grudge"], (nlohmann::json{{"c1", {"n4"}}, {"n4", {"c1"}}})) << "cut both ways";
  EXPECT_EQ(first[0].planned, t0 + milliseconds(100));
  EXPECT_TRUE(cursor.due(t0 + milliseconds(500)).empty()) << "nothing more while a batch is being applied";
  cursor.applied(t0 + milliseconds(120));  // the cut took 20 ms
  EXPECT_TRUE(cursor.due(t0 + milliseconds(169)).empty());
  auto second = cursor.due(t0 + milliseconds(170));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].f, "heal");
  EXPECT_EQ(cursor.describe(), "");
}

TEST(PlanCursor, AnEventFiresItsStepAndTheUndelayedOnesAfterItWithTheHolderBound) {
  Plan p = plan_of(R"([{"on": "acquire-ok", "client": "holder", "key": "l1", "do": "pause", "node": "holder", "for_ms": 300},
                       {"after_ms": 0, "do": "cut", "grudge": {"holder": ["n1"]}},
                       {"after_ms": 5, "do": "heal-cut"}])");
  const TimeSource::Instant t0{};
  PlanCursor cursor(p, t0);
  EXPECT_TRUE(cursor.due(t0 + milliseconds(1000)).empty()) << "an event step waits for its event";
  EXPECT_TRUE(cursor.waiting_for_event());
  EXPECT_NE(cursor.describe().find("waits for acquire-ok by any client on l1"), std::string::npos);
  EXPECT_TRUE(cursor.on_event({LockEventKind::kAcquireOk, "c2", "l0", t0}, t0).empty()) << "another key";
  EXPECT_TRUE(cursor.on_event({LockEventKind::kRelease, "c2", "l1", t0}, t0).empty()) << "another event";
  auto fired = cursor.on_event({LockEventKind::kAcquireOk, "c2", "l1", t0 + milliseconds(10)}, t0 + milliseconds(10));
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0].value, (nlohmann::json{{"fault", "pause-client"}, {"targets", {"c2"}}, {"ms", 300}}));
  EXPECT_EQ(fired[0].planned, t0 + milliseconds(10)) << "due the instant its event came";
  EXPECT_EQ(fired[1].value["grudge"], (nlohmann::json{{"c2", {"n1"}}, {"n1", {"c2"}}}));
  EXPECT_FALSE(cursor.waiting_for_event());
  cursor.applied(t0 + milliseconds(40));
  ASSERT_EQ(cursor.due(t0 + milliseconds(45)).size(), 1u);
}

TEST(PlanCursor, CutsAddUpAndAForMsUndoRemovesOnlyItsLinks) {
  Plan p = plan_of(R"([{"at_ms": 0, "do": "cut", "grudge": {"c1": ["n4"]}},
                       {"after_ms": 0, "do": "cut", "grudge": {"c2": ["n1"]}, "for_ms": 100},
                       {"after_ms": 500, "do": "heal-cut"}])");
  const TimeSource::Instant t0{};
  PlanCursor cursor(p, t0);
  auto lines = cursor.due(t0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].value["grudge"],
            (nlohmann::json{{"c1", {"n4"}}, {"n4", {"c1"}}, {"c2", {"n1"}}, {"n1", {"c2"}}}));
  cursor.applied(t0);
  auto undo = cursor.due(t0 + milliseconds(100));
  ASSERT_EQ(undo.size(), 1u);
  EXPECT_EQ(undo[0].f, "partition");
  EXPECT_EQ(undo[0].value["grudge"], (nlohmann::json{{"c1", {"n4"}}, {"n4", {"c1"}}}));
  cursor.applied(t0 + milliseconds(100));
  auto heal = cursor.due(t0 + milliseconds(500));
  ASSERT_EQ(heal.size(), 1u);
  EXPECT_EQ(heal[0].f, "heal");
}

TEST(PlanCursor, ClockStepsSetOffsetsAsDeltasAndUndoThem) {
  Plan p = plan_of(R"([{"at_ms": 0, "do": "clock", "offsets": {"n3": 30000}},
                       {"after_ms": 0, "do": "clock", "offsets": {"n3": 10000, "n1": -500}, "for_ms": 50}])");
  const TimeSource::Instant t0{};
  PlanCursor cursor(p, t0);
  auto lines = cursor.due(t0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].value["deltas"], (nlohmann::json{{"n3", 30000}}));
  EXPECT_EQ(lines[1].value["deltas"], (nlohmann::json{{"n1", -500}, {"n3", -20000}}));
  cursor.applied(t0);
  auto undo = cursor.due(t0 + milliseconds(50));
  ASSERT_EQ(undo.size(), 1u);
  EXPECT_EQ(undo[0].value["deltas"], (nlohmann::json{{"n1", 500}, {"n3", 20000}})) << "back to n3 +30000, n1 0";
}

TEST(PlanCursor, ALockEventWhileABatchIsOutFiresItsStepWhenTheBatchIsApplied) {
  Plan p = plan_of(R"([{"at_ms": 0, "do": "cut", "grudge": {"c1": ["n4"]}, "for_ms": 10},
                       {"on": "release", "client": "c2", "do": "heal-cut"}])");
  const TimeSource::Instant t0{};
  PlanCursor cursor(p, t0);
  ASSERT_EQ(cursor.due(t0).size(), 1u);
  cursor.applied(t0);
  ASSERT_EQ(cursor.due(t0 + milliseconds(10)).size(), 1u) << "the cut's undo: a batch of no step";
  EXPECT_TRUE(cursor.waiting_for_event());
  EXPECT_TRUE(cursor.on_event({LockEventKind::kRelease, "c2", "l0", t0 + milliseconds(11)}, t0 + milliseconds(11)).empty())
      << "kept while the undo is being applied";
  auto fired = cursor.applied(t0 + milliseconds(12));
  ASSERT_EQ(fired.size(), 1u) << "not lost";
  EXPECT_EQ(fired[0].f, "heal");
  EXPECT_TRUE(cursor.applied(t0 + milliseconds(13)).empty());
  EXPECT_EQ(cursor.steps_fired(), 2u);
}

// Two lock events while a step is being applied: both fire their steps, in order, each
// planned at the instant its event came (not when it could be applied); none is lost.
TEST(PlanCursor, EveryLockEventWhileABatchIsOutFiresInOrderAtItsOwnInstant) {
  Plan p = plan_of(R"([{"at_ms": 0, "do": "cut", "grudge": {"c1": ["n4"]}},
                       {"on": "acquire-ok", "client": "c1", "do": "clock", "offsets": {"n3": 30000}},
                       {"on": "release", "client": "c1", "do": "heal-cut"}])");
  const TimeSource::Instant t0{};
  PlanCursor cursor(p, t0);
  ASSERT_EQ(cursor.due(t0).size(), 1u) << "the cut is out, being applied";
  EXPECT_TRUE(cursor.on_event({LockEventKind::kAcquireOk, "c1", "l0", t0 + milliseconds(3)}, t0 + milliseconds(3)).empty());
  EXPECT_TRUE(cursor.on_event({LockEventKind::kRelease, "c1", "l0", t0 + milliseconds(7)}, t0 + milliseconds(7)).empty());
  auto clock = cursor.applied(t0 + milliseconds(50));  // the cut took 50 ms
  ASSERT_EQ(clock.size(), 1u);
  EXPECT_EQ(clock[0].f, "clock-bump");
  EXPECT_EQ(clock[0].planned, t0 + milliseconds(3)) << "planned when its acquire-ok came";
  auto heal = cursor.applied(t0 + milliseconds(60));
  ASSERT_EQ(heal.size(), 1u) << "the release that came meanwhile was lost";
  EXPECT_EQ(heal[0].f, "heal");
  EXPECT_EQ(heal[0].planned, t0 + milliseconds(7));
  EXPECT_TRUE(cursor.applied(t0 + milliseconds(61)).empty());
  EXPECT_EQ(cursor.steps_fired(), 3u);
}

TEST(PlanCursor, AClockUndoLeavesANodeALaterStepMovedAlone) {
  Plan p = plan_of(R"([{"at_ms": 0, "do": "clock", "offsets": {"n3": 30000, "n1": 100}, "for_ms": 50},
                       {"after_ms": 10, "do": "clock", "offsets": {"n3": 5000}}])");
  const TimeSource::Instant t0{};
  PlanCursor cursor(p, t0);
  ASSERT_EQ(cursor.due(t0).size(), 1u);
  cursor.applied(t0);
  ASSERT_EQ(cursor.due(t0 + milliseconds(10)).size(), 1u);
  cursor.applied(t0 + milliseconds(10));
  auto undo = cursor.due(t0 + milliseconds(50));
  ASSERT_EQ(undo.size(), 1u);
  EXPECT_EQ(undo[0].value["deltas"], (nlohmann::json{{"n1", -100}})) << "n3 keeps the later step's 5000";
}

TEST(PlanSchedule, ThePlanThreadAppliesStepsAndTheFinalHealEndsThem) {
  FakeNemesisEnv env(kTwoClients, kFiveServers);
  Plan p = plan_of(R"([{"at_ms": 0, "do": "cut", "grudge": {"c1": ["n4"]}},
                       {"on": "acquire-ok", "client": "holder", "do": "pause", "node": "holder", "for_ms": 60000},
                       {"after_ms": 0, "do": "clock", "offsets": {"n1": 1000}}])");
  NemesisSchedule s(p, env.ctx, default_fault_options());
  s.start();
  auto wait_for = [&](auto done) {  // the plan thread steps every 5 ms of real time
    for (int i = 0; i < 400 && !done(); ++i) std::this_thread::sleep_for(milliseconds(5));
    return done();
  };
  ASSERT_TRUE(wait_for([&] { return !env.cuts().empty(); })) << "the at_ms step, from the plan thread";
  std::thread client([&] { env.publish(LockEventKind::kAcquireOk, "c2"); });
  client.join();
  EXPECT_EQ(env.stopped_nodes(), std::vector<std::string>{"c2"}) << "applied on the client's thread";
  EXPECT_EQ(s.plan_progress(), (std::pair<std::size_t, std::size_t>{3, 3}));
  s.heal_now();
  EXPECT_TRUE(env.every_stop_resumed_in_order()) << "the final heal ends a 60 s pause at once";
  EXPECT_EQ(env.cuts().back(), Grudge{});
  EXPECT_EQ(env.ctx.clocks.offset("n1"), milliseconds(0));
  s.stop();
}

TEST(PlanSchedule, AppliesTimedStepsThroughTheFamiliesAndEventStepsOnTheCallersThread) {
  FakeNemesisEnv env(kTwoClients, kFiveServers);
  Plan p = plan_of(R"([{"at_ms": 20, "do": "cut", "grudge": {"c1": ["n4", "n5"]}},
                       {"on": "acquire-ok", "client": "c1", "do": "clock", "offsets": {"n3": 30000}},
                       {"after_ms": 0, "do": "pause", "node": "holder", "for_ms": 30},
                       {"on": "release", "client": "c1", "do": "heal-cut"},
                       {"after_ms": 0, "do": "clock-reset"}])");
  NemesisSchedule s(p, env.ctx, default_fault_options());
  env.publish(LockEventKind::kAcquireOk, "c1");
  EXPECT_TRUE(env.records().empty()) << "the cut comes first: an event before it fires nothing";
  env.time.advance(milliseconds(20));
  s.poll();
  ASSERT_EQ(env.cuts().size(), 1u);
  EXPECT_EQ(env.cuts()[0], (Grudge{{"c1", {"n4", "n5"}}, {"n4", {"c1"}}, {"n5", {"c1"}}}));
  env.publish(LockEventKind::kAcquireOk, "c2");
  EXPECT_EQ(env.ctx.clocks.offset("n3"), milliseconds(0)) << "c2 is not the client the step waits for";
  env.publish(LockEventKind::kAcquireOk, "c1");
  EXPECT_EQ(env.ctx.clocks.offset("n3"), milliseconds(30000)) << "applied before on_lock_event returned";
  EXPECT_EQ(env.stopped_nodes(), std::vector<std::string>{"c1"}) << "the holder paused on its own acquire";
  env.time.advance(milliseconds(30));
  s.poll();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  env.publish(LockEventKind::kRelease, "c1");
  EXPECT_EQ(env.cuts().back(), Grudge{});
  EXPECT_EQ(env.ctx.clocks.offset("n3"), milliseconds(0));
  std::vector<std::string> fs;
  for (const auto& r : env.records()) fs.push_back(r.f);
  EXPECT_EQ(fs, (std::vector<std::string>{"partition", "clock-bump", "pause", "resume", "heal", "clock-reset"}));
  EXPECT_TRUE(env.records()[0].planned.has_value()) << "a timed step has its planned instant";
  EXPECT_EQ(env.records()[1].planned, env.records()[1].at) << "an event step was due at its event";
}

}  // namespace
}  // namespace fencecheck::testing
