// NemesisSchedule on a recording env and a ManualTime: it starts only configured faults,
// on time, seeded, and leaves nothing paused once stopped. poll() is driven by hand, so
// no test sleeps; one test runs the real thread to show start()/stop() drive poll().
#include "nemesis/fault_registry.h"
#include "nemesis/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <thread>

#include "tests/nemesis/fake_env.h"
#include "tests/nemesis/node_names.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;


// Advances the env's time in `step`s, polling after each, `steps` times.
void run_for(FakeNemesisEnv& env, NemesisSchedule& s, int steps, milliseconds step = milliseconds(10)) {
  for (int i = 0; i < steps; ++i) {
    env.time.advance(step);
    s.poll();
  }
}

TEST(NemesisSchedule, NoFaultsNeverStartsAnything) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  NemesisSchedule s({}, milliseconds(1), 1, env.ctx, with_pause(milliseconds(5)));
  run_for(env, s, 100);
  env.acquired("c1");
  s.stop();
  EXPECT_TRUE(env.signals().empty());
  EXPECT_TRUE(env.records().empty());
  EXPECT_TRUE(s.describe_active().empty());
}

// Jepsen's shape: each family alternates a recovery window and a fault, each window and
// each hold of an open-ended fault U[0, 2 × interval); families run concurrently.
TEST(NemesisSchedule, FamiliesAlternateRecoveryWindowsAndFaultsConcurrently) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  const milliseconds interval(100), pause(50);
  NemesisSchedule s({"partition-halves", "pause-client"}, interval, 1, env.ctx, with_pause(pause));
  run_for(env, s, 1000);  // 10 s in 10 ms steps
  s.stop();
  auto records = env.records();
  std::map<std::string, std::vector<Recorded>> by_family;
  for (const auto& r : records) by_family[r.value["fault"] == "pause-client" ? "pause" : "partition"].push_back(r);
  ASSERT_GT(by_family["pause"].size(), 20u);
  ASSERT_GT(by_family["partition"].size(), 20u);
  const auto slack = milliseconds(10);  // one poll
  for (auto& [family, lines] : by_family) {
    SCOPED_TRACE(family);
    const std::string start = family == "pause" ? "pause" : "partition";
    const std::string end = family == "pause" ? "resume" : "heal";
    TimeSource::Instant last_end = lines.front().at;
    for (std::size_t i = 0; i + 1 < lines.size(); i += 2) {
      ASSERT_EQ(lines[i].f, start) << i;
      ASSERT_EQ(lines[i + 1].f, end) << i;
      auto held = lines[i + 1].at - lines[i].at;
      if (family == "pause") {
        EXPECT_EQ(held, pause) << "a pause lasts exactly --pause-ms";
      } else {
        EXPECT_LE(held, 2 * interval + slack) << "an open-ended fault is healed within 2 × interval";
      }
      if (i > 0) {
        EXPECT_LE(lines[i].at - last_end, 2 * interval + slack) << "recovery window";
      }
      last_end = lines[i + 1].at;
    }
  }
  // Concurrency: some pause began while a partition was in force.
  bool overlapped = false;
  bool cut = false;
  for (const auto& r : records) {
    if (r.f == "partition") cut = true;
    if (r.f == "heal") cut = false;
    overlapped |= cut && r.f == "pause";
  }
  EXPECT_TRUE(overlapped);
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  EXPECT_EQ(env.cuts().back(), Grudge{});
}

TEST(NemesisSchedule, ReplayAppliesRecordedLinesAtTheirInstants) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  nlohmann::json grudge = {{"n1", {"c1"}}, {"c1", {"n1"}}};
  std::vector<ReplayLine> lines = {
      {milliseconds(30), "partition", {{"fault", "partition-one"}, {"grudge", grudge}}},
      {milliseconds(50), "pause", {{"fault", "pause-server"}, {"targets", {"n3"}}, {"ms", 40}}},
      {milliseconds(80), "heal", {{"fault", "partition-one"}}},
  };
  NemesisSchedule s({"partition-one", "pause-server"}, lines, env.ctx, default_fault_options());
  run_for(env, s, 2);
  EXPECT_TRUE(env.cuts().empty());
  run_for(env, s, 1);  // 30 ms
  ASSERT_EQ(env.cuts().size(), 1u);
  EXPECT_EQ(env.cuts()[0], (Grudge{{"n1", {"c1"}}, {"c1", {"n1"}}}));
  run_for(env, s, 2);  // 50 ms
  EXPECT_EQ(env.stopped_nodes(), std::vector<std::string>{"n3"});
  run_for(env, s, 3);  // 80 ms
  EXPECT_EQ(env.cuts().back(), Grudge{});
  run_for(env, s, 1);  // 90 ms: the 40 ms pause is over
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  EXPECT_THROW(NemesisSchedule({"pause-server"}, lines, env.ctx, default_fault_options()),
               std::invalid_argument)
      << "a recorded fault the run does not have";
}

TEST(NemesisSchedule, StopHealsAPauseStillInForce) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  NemesisSchedule s({"pause-server"}, milliseconds(1), 3, env.ctx, with_pause(milliseconds(60'000)));
  run_for(env, s, 1);
  ASSERT_EQ(s.describe_active().size(), 1u);
  EXPECT_EQ(s.describe_active()[0].rfind("pause-server n", 0), 0u) << s.describe_active()[0];
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  EXPECT_EQ(env.stopped_nodes().size(), 1u) << "one pause at a time, and this one never ended";
}

TEST(NemesisSchedule, HealNowResumesAtOnceAndInjectsNothingMore) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  NemesisSchedule s({"pause-client"}, milliseconds(1), 3, env.ctx, with_pause(milliseconds(30'000)));
  run_for(env, s, 1);
  ASSERT_EQ(env.stopped_nodes().size(), 1u);
  s.heal_now();  // Ctrl-C during a 30 s pause: no waiting for it to end
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  run_for(env, s, 100, milliseconds(1000));
  EXPECT_EQ(env.stopped_nodes().size(), 1u) << "a healed schedule must not start new faults";
}

TEST(NemesisSchedule, DestructorHealsToo) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  {
    NemesisSchedule s({"pause-client"}, milliseconds(1), 3, env.ctx, with_pause(milliseconds(60'000)));
    run_for(env, s, 1);
    ASSERT_FALSE(env.signals().empty());
  }
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

TEST(NemesisSchedule, HolderPauseHitsTheNodeThatAcquires) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  NemesisSchedule s({"pause-holder"}, milliseconds(5), 3, env.ctx, with_pause(milliseconds(60'000)));
  run_for(env, s, 1);
  ASSERT_EQ(s.describe_active(), std::vector<std::string>{"pause-holder (armed)"});
  env.acquired("c4");
  EXPECT_EQ(env.stopped_nodes(), std::vector<std::string>{"c4"});
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

// The first n pause targets of a schedule seeded with `seed`.
std::vector<std::string> first_targets(std::uint64_t seed, std::size_t n) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  NemesisSchedule s({"pause-client", "pause-server"}, milliseconds(2), seed, env.ctx,
                    with_pause(milliseconds(2)));
  for (int i = 0; i < 10'000 && env.stopped_nodes().size() < n; ++i) run_for(env, s, 1, milliseconds(1));
  s.stop();
  auto targets = env.stopped_nodes();
  EXPECT_GE(targets.size(), n);
  targets.resize(std::min(targets.size(), n));
  return targets;
}

TEST(NemesisSchedule, SameSeedSameTargets) {
  auto a = first_targets(42, 8);
  auto b = first_targets(42, 8);
  ASSERT_EQ(a.size(), 8u);
  EXPECT_EQ(a, b);
  // The seed must matter: these two seeds draw different sequences (deterministically).
  EXPECT_NE(a, first_targets(43, 8));
}

TEST(NemesisSchedule, AFaultThatCannotBeInjectedStopsTheSchedule) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  struct FailingProcesses : NodeProcesses {
    std::vector<std::string> nodes() const override { return {"n1"}; }
    bool pause(const std::string&, const Deadline&) override { throw HarnessError("cannot stop n1"); }
    void resume(const std::string&, const Deadline&) override {}
    bool kill(const std::string&, const Deadline&) override { return true; }
    bool stop(const std::string&, const Deadline&) override { return true; }
    void launch(const std::string&, const Deadline&) override {}
    Readiness await_ready(const std::string&, const Deadline&) override { return Readiness::kReady; }
  } failing;
  NemesisContext ctx{env.ctx.net, failing, env.ctx.clients, env.ctx.clocks, env.ctx.log, env.time, env.events};
  NemesisSchedule s({"pause-server"}, milliseconds(1), 1, ctx, default_fault_options());
  run_for(env, s, 3);
  EXPECT_NE(s.error().find("the pause family: cannot stop n1"), std::string::npos) << s.error();
  EXPECT_NE(s.error().find("faults in force then: none"), std::string::npos) << s.error();
  EXPECT_TRUE(env.records().empty());
}

TEST(NemesisSchedule, TheThreadDrivesPollUntilStopped) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  NemesisSchedule s({"pause-client"}, milliseconds(1), 3, env.ctx, with_pause(milliseconds(60'000)));
  env.time.advance(milliseconds(5));  // the first fault is due as soon as the thread polls
  s.start();
  for (int i = 0; i < 500 && env.signals().empty(); ++i) std::this_thread::sleep_for(milliseconds(2));
  EXPECT_EQ(env.stopped_nodes().size(), 1u);
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

TEST(NemesisSchedule, UnknownFaultIsRejected) {
  FakeNemesisEnv env(kFiveClients, kThreeServers);
  EXPECT_THROW(NemesisSchedule({"pause-holder", "bogus"}, milliseconds(5), 1, env.ctx, default_fault_options()),
               std::invalid_argument);
}

}  // namespace
}  // namespace fencecheck::testing
