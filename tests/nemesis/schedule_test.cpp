// NemesisSchedule on a recording env and a ManualTime: it starts only configured faults,
// on time, seeded, and leaves nothing paused once stopped. poll() is driven by hand, so
// no test sleeps; one test runs the real thread to show start()/stop() drive poll().
#include "nemesis/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "tests/nemesis/fake_env.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;

const std::vector<std::string> kClients = {"c1", "c2", "c3", "c4", "c5"};
const std::vector<std::string> kServers = {"n1", "n2", "n3"};

// Advances the env's time in `step`s, polling after each, `steps` times.
void run_for(FakeNemesisEnv& env, NemesisSchedule& s, int steps, milliseconds step = milliseconds(10)) {
  for (int i = 0; i < steps; ++i) {
    env.time.advance(step);
    s.poll();
  }
}

TEST(NemesisSchedule, NoFaultsNeverStartsAnything) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({}, milliseconds(1), 1, env.ctx, FaultOptions{milliseconds(5)});
  run_for(env, s, 100);
  s.on_acquired("c1");
  s.stop();
  EXPECT_TRUE(env.signals().empty());
  EXPECT_TRUE(env.records().empty());
  EXPECT_TRUE(s.describe_active().empty());
}

TEST(NemesisSchedule, FaultsStartOneIntervalApartAndEndOnTime) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-client"}, milliseconds(100), 1, env.ctx, FaultOptions{milliseconds(30)});
  run_for(env, s, 9);  // 90 ms: the first interval has not passed
  EXPECT_TRUE(env.signals().empty());
  run_for(env, s, 1);  // 100 ms: the first pause
  ASSERT_EQ(env.stopped_nodes().size(), 1u);
  run_for(env, s, 2);  // 120 ms: still paused
  EXPECT_EQ(env.signals().size(), 1u);
  run_for(env, s, 1);  // 130 ms: 30 ms of pause are over
  ASSERT_EQ(env.signals().size(), 2u);
  EXPECT_EQ(env.signals()[1].sig, SIGCONT);
  run_for(env, s, 6);  // 190 ms: the next pause comes an interval after the last start
  EXPECT_EQ(env.stopped_nodes().size(), 1u);
  run_for(env, s, 1);  // 200 ms
  EXPECT_EQ(env.stopped_nodes().size(), 2u);
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  auto records = env.records();
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].f, i % 2 == 0 ? "pause" : "resume") << "record " << i;
  }
  for (const auto& node : env.stopped_nodes()) {
    EXPECT_NE(std::find(kClients.begin(), kClients.end(), node), kClients.end()) << node;
  }
}

TEST(NemesisSchedule, StopHealsAPauseStillInForce) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-server"}, milliseconds(1), 3, env.ctx, FaultOptions{milliseconds(60'000)});
  run_for(env, s, 1);
  ASSERT_EQ(s.describe_active().size(), 1u);
  EXPECT_EQ(s.describe_active()[0].rfind("pause-server n", 0), 0u) << s.describe_active()[0];
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  EXPECT_EQ(env.stopped_nodes().size(), 1u) << "one pause at a time, and this one never ended";
}

TEST(NemesisSchedule, HealNowResumesAtOnceAndInjectsNothingMore) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-client"}, milliseconds(1), 3, env.ctx, FaultOptions{milliseconds(30'000)});
  run_for(env, s, 1);
  ASSERT_EQ(env.stopped_nodes().size(), 1u);
  s.heal_now();  // Ctrl-C during a 30 s pause: no waiting for it to end
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  run_for(env, s, 100, milliseconds(1000));
  EXPECT_EQ(env.stopped_nodes().size(), 1u) << "a healed schedule must not start new faults";
}

TEST(NemesisSchedule, DestructorHealsToo) {
  FakeNemesisEnv env(kClients, kServers);
  {
    NemesisSchedule s({"pause-client"}, milliseconds(1), 3, env.ctx, FaultOptions{milliseconds(60'000)});
    run_for(env, s, 1);
    ASSERT_FALSE(env.signals().empty());
  }
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

TEST(NemesisSchedule, HolderPauseHitsTheNodeThatAcquires) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-holder"}, milliseconds(5), 3, env.ctx, FaultOptions{milliseconds(60'000)});
  run_for(env, s, 1);
  ASSERT_EQ(s.describe_active(), std::vector<std::string>{"pause-holder (armed)"});
  s.on_acquired("c4");
  EXPECT_EQ(env.stopped_nodes(), std::vector<std::string>{"c4"});
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

// The first n pause targets of a schedule seeded with `seed`.
std::vector<std::string> first_targets(std::uint64_t seed, std::size_t n) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-client", "pause-server"}, milliseconds(2), seed, env.ctx,
                    FaultOptions{milliseconds(2)});
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
  FakeNemesisEnv env(kClients, kServers);
  struct FailingProcesses : NodeProcesses {
    std::vector<std::string> nodes() const override { return {"n1"}; }
    void pause(const std::string&) override { throw HarnessError("cannot stop n1"); }
    void resume(const std::string&) override {}
    void kill(const std::string&) override {}
    void start(const std::string&) override {}
  } failing;
  NemesisContext ctx{env.ctx.net, failing, env.ctx.clients, env.ctx.clocks, env.ctx.log, env.time};
  NemesisSchedule s({"pause-server"}, milliseconds(1), 1, ctx, FaultOptions{});
  run_for(env, s, 3);
  EXPECT_EQ(s.error(), "cannot stop n1");
  EXPECT_TRUE(env.records().empty());
}

TEST(NemesisSchedule, TheThreadDrivesPollUntilStopped) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-client"}, milliseconds(1), 3, env.ctx, FaultOptions{milliseconds(60'000)});
  env.time.advance(milliseconds(5));  // the first fault is due as soon as the thread polls
  s.start();
  for (int i = 0; i < 500 && env.signals().empty(); ++i) std::this_thread::sleep_for(milliseconds(2));
  EXPECT_EQ(env.stopped_nodes().size(), 1u);
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

TEST(NemesisSchedule, UnknownFaultIsRejected) {
  FakeNemesisEnv env(kClients, kServers);
  EXPECT_THROW(NemesisSchedule({"pause-holder", "bogus"}, milliseconds(5), 1, env.ctx, FaultOptions{}),
               std::invalid_argument);
}

}  // namespace
}  // namespace fencecheck::testing
