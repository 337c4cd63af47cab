// NemesisSchedule's families on their own threads: a family stuck in a restart that waits
// for readiness (a quorum the run's own faults withhold) delays no other family and no
// caller of describe_active(); heal_now() ends the wait and records the start as not ready;
// every line the schedule plans carries its planned instant. Real threads, a ManualTime;
// waits are bounded by generous limits only so that a regression fails instead of hanging.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "nemesis/crash_nemesis.h"
#include "nemesis/fault_registry.h"
#include "nemesis/schedule.h"
#include "tests/nemesis/fake_env.h"
#include "tests/nemesis/node_names.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;


// Servers whose restart never becomes ready: await_ready blocks until give_up says so.
class NeverReadyServers final : public NodeProcesses {
 public:
  std::vector<std::string> nodes() const override { return kThreeServers; }
  bool pause(const std::string&, const Deadline&) override { return true; }
  void resume(const std::string&, const Deadline&) override {}
  bool kill(const std::string&, const Deadline&) override { return true; }
  bool stop(const std::string&, const Deadline&) override { return true; }
  void launch(const std::string&, const Deadline&) override { ++launches; }
  Readiness await_ready(const std::string&, const Deadline& deadline) override {
    waiting = true;
    // Bounded so that a schedule that never gives up fails the test instead of hanging it.
    for (int i = 0; i < 30'000; ++i) {
      if (deadline.cancelled()) return Readiness::kGaveUp;
      std::this_thread::sleep_for(milliseconds(1));
    }
    return Readiness::kTimedOut;
  }
  std::atomic<bool> waiting{false};
  std::atomic<int> launches{0};
};

template <class Pred>
bool eventually(Pred pred, FakeNemesisEnv* env = nullptr) {
  for (int i = 0; i < 10'000; ++i) {
    if (pred()) return true;
    if (env != nullptr) env->time.advance(milliseconds(10));
    std::this_thread::sleep_for(milliseconds(1));
  }
  return false;
}

TEST(ScheduleThreads, ARestartWaitingForAQuorumBlocksNoOtherFamily) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  NeverReadyServers servers;
  NemesisContext ctx{env.ctx.net, servers, env.ctx.clients, env.ctx.clocks, env.ctx.log, env.time, env.events};
  FaultOptions o = with_pause(milliseconds(100));
  o.set("nemesis-targets", "all");
  NemesisSchedule s({"kill-server", "pause-client"}, milliseconds(50), 7, ctx, o);
  s.start();
  ASSERT_TRUE(eventually([&] { return servers.waiting.load(); }, &env)) << "no restart began";
  // The crash family is stuck in its wait: pause-client goes on pausing and resuming.
  std::size_t before = env.stopped_nodes().size();
  ASSERT_TRUE(eventually([&] { return env.stopped_nodes().size() >= before + 3; }, &env))
      << "the pause family stalled behind the crash family's restart";
  // describe_active answers while the restart waits, and says so.
  auto shown = std::async(std::launch::async, [&] { return s.describe_active(); });
  ASSERT_EQ(shown.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  bool starting = false;
  for (const auto& d : shown.get()) starting = starting || d.find("(starting)") != std::string::npos;
  EXPECT_TRUE(starting);
  // heal_now ends the wait; the start is on the record, its nodes not ready.
  auto healed = std::async(std::launch::async, [&] { s.heal_now(); });
  ASSERT_EQ(healed.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "heal_now hung";
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  bool started = false, ready_recorded = false;
  for (const auto& r : env.records()) {
    started = started || r.f == "start";
    if (r.f != "ready") continue;
    ready_recorded = true;
    EXPECT_FALSE(r.planned.has_value()) << "the servers' answer is not a planned instant";
    EXPECT_EQ(r.value["not_ready"].size(), kThreeServers.size()) << r.value.dump();
    EXPECT_TRUE(r.value["targets"].empty());
  }
  EXPECT_TRUE(started);
  EXPECT_TRUE(ready_recorded);
  EXPECT_TRUE(s.error().empty()) << s.error();
}

TEST(ScheduleThreads, LinesCarryTheInstantTheScheduleMeant) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  NemesisSchedule s({"pause-server", "partition-one"}, milliseconds(20), 3, env.ctx, with_pause(milliseconds(30)));
  for (int i = 0; i < 200; ++i) {
    env.time.advance(milliseconds(1));
    s.poll();
  }
  auto records = env.records();  // before stop(): the final heal has no plan
  s.stop();
  int planned = 0;
  for (const auto& r : records) {
    if (r.f == "pause" || r.f == "resume" || r.f == "partition" || (r.f == "heal" && r.planned)) {
      ASSERT_TRUE(r.planned.has_value()) << r.f << " " << r.value.dump();
      // Polled every 1 ms of manual time: each line comes within a step of its plan.
      EXPECT_GE(r.at, *r.planned);
      EXPECT_LE(r.at - *r.planned, milliseconds(1)) << r.f;
      ++planned;
    }
  }
  EXPECT_GE(planned, 4);
}

TEST(ScheduleThreads, ALockAwareFaultFiredByAClientHasNoPlan) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  NemesisSchedule s({"pause-holder"}, milliseconds(1), 1, env.ctx, with_pause(milliseconds(50)));
  for (int i = 0; i < 5; ++i) {
    env.time.advance(milliseconds(2));
    s.poll();
  }
  std::thread client([&] { env.acquired("c2"); });
  client.join();
  s.stop();
  bool paused = false;
  for (const auto& r : env.records()) {
    if (r.f != "pause") continue;
    paused = true;
    EXPECT_FALSE(r.planned.has_value());
  }
  EXPECT_TRUE(paused);
}

TEST(CrashFamilyTargets, AKillOfNodesAlreadyDownIsRecordedAsNotApplied) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  FaultOptions o = default_fault_options();
  o.set("nemesis-targets", "all");
  o.set("restart-ms", 1000);
  CrashNemesis first(env.ctx, o), second(env.ctx, o);
  std::mt19937_64 rng(1);
  first.start("kill-server", rng);
  second.start("kill-server", rng);  // every server is down already
  auto records = env.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].value.contains("not_applied"));
  EXPECT_TRUE(records[1].value.contains("not_applied")) << records[1].value.dump();
  EXPECT_TRUE(records[1].value["targets"].empty());
  EXPECT_FALSE(second.active());
  first.heal();  // the final heal launches them and does not wait
  EXPECT_EQ(env.records().back().f, "start");
}

TEST(CrashFamilyTargets, APauseOfADownServerIsRecordedAsNotAppliedAndNeverResumed) {
  FakeNemesisEnv env(kTwoClients, {"n1"});
  FaultOptions o = with_pause(milliseconds(10));
  o.set("restart-ms", 1000);
  auto crash = find_fault("kill-server")->make(env.ctx, o);
  auto pause = find_fault("pause-server")->make(env.ctx, o);
  std::mt19937_64 rng(1);
  crash->start("kill-server", rng);
  pause->start("pause-server", rng);
  ASSERT_EQ(env.records().back().f, "pause");
  EXPECT_EQ(env.records().back().value["not_applied"], "n1 is down");
  EXPECT_FALSE(pause->active());
  env.time.advance(milliseconds(20));
  pause->tick();
  EXPECT_EQ(env.records().back().f, "pause");  // no resume of a pause that never was
  crash->heal();
}

}  // namespace
}  // namespace fencecheck::testing
