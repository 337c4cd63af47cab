// The partition, clock and crash families against a recording env on a ManualTime: what
// each fault does, what it records (enough to replay), and that heal undoes it.
#include <gtest/gtest.h>

#include <set>

#include "nemesis/clock_nemesis.h"
#include "nemesis/crash_nemesis.h"
#include "nemesis/fault_registry.h"
#include "nemesis/targets.h"
#include "nemesis/grudges.h"
#include "nemesis/partition_nemesis.h"
#include "platform/errors.h"
#include "tests/nemesis/fake_env.h"
#include "tests/nemesis/node_names.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;


TEST(PartitionFamily, CutsRecordTheGrudgeAndHealFlushes) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  PartitionNemesis p(env.ctx, default_fault_options());
  std::mt19937_64 rng(1);
  p.start("partition-one", rng);
  ASSERT_EQ(env.cuts().size(), 1u);
  auto rec = env.records().back();
  EXPECT_EQ(rec.f, "partition");
  EXPECT_EQ(grudge_from_json(rec.value["grudge"]), env.cuts()[0]) << "the record is the exact cut";
  EXPECT_TRUE(p.active());
  p.start("partition-halves", rng);  // one partition at a time
  EXPECT_EQ(env.cuts().size(), 1u);
  p.heal();
  EXPECT_EQ(env.cuts().back(), Grudge{});
  EXPECT_EQ(env.records().back().f, "heal");
  EXPECT_FALSE(p.active());
}

TEST(PartitionFamily, LeaderIsCutFromEveryoneElse) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);  // the fake names the first server leader
  PartitionNemesis p(env.ctx, default_fault_options());
  std::mt19937_64 rng(1);
  p.start("partition-leader", rng);
  EXPECT_EQ(env.cuts().back().at("n1"), (std::set<std::string>{"n2", "n3", "c1", "c2"}));
}

TEST(PartitionFamily, HolderIsCutFromTheServersOnlyForItsTime) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  PartitionNemesis p(env.ctx, with_pause(milliseconds(500)));
  std::mt19937_64 rng(1);
  p.start("partition-holder", rng);
  EXPECT_TRUE(env.cuts().empty()) << "armed, not cut";
  EXPECT_EQ(env.records().back().f, "arm");
  EXPECT_TRUE(p.active());
  EXPECT_FALSE(p.acting()) << "armed is not in force";
  env.acquired("c2");
  EXPECT_TRUE(p.acting());
  Grudge cut = env.cuts().back();
  EXPECT_EQ(cut.at("c2"), (std::set<std::string>{"n1", "n2", "n3"}));
  EXPECT_FALSE(cut.count("c1") && !cut.at("c1").empty()) << "other clients keep their links";
  EXPECT_EQ(cut.count("r1"), 0u) << "the resource stays reachable";
  env.time.advance(milliseconds(499));
  p.tick();
  EXPECT_TRUE(p.active());
  env.time.advance(milliseconds(1));
  p.tick();
  EXPECT_FALSE(p.active());
  EXPECT_EQ(env.cuts().back(), Grudge{});
}

TEST(PartitionFamily, ReplayCutsTheRecordedGrudge) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  PartitionNemesis p(env.ctx, default_fault_options());
  p.replay("partition", {{"fault", "partition-bridge"}, {"grudge", {{"n1", {"c1"}}, {"c1", {"n1"}}}}});
  EXPECT_EQ(env.cuts().back(), (Grudge{{"n1", {"c1"}}, {"c1", {"n1"}}}));
  p.replay("heal", {{"fault", "partition-bridge"}});
  EXPECT_EQ(env.cuts().back(), Grudge{});
  EXPECT_THROW(p.replay("pause", {{"fault", "partition-one"}}), std::invalid_argument);
}

TEST(ClockFamily, BumpsAddUpWithinTheCapAndHealResets) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  ClockNemesis c(env.ctx, fault_options({{"clock-max-ms", 500}}));
  std::mt19937_64 rng(9);
  for (int i = 0; i < 20; ++i) c.start("clock-bump", rng);
  bool shifted = false;
  for (const auto& r : env.records()) {
    ASSERT_EQ(r.f, "clock-bump");
    for (const auto& [node, d] : r.value["deltas"].items()) {
      EXPECT_LE(std::abs(d.get<long>()), 500) << "--clock-max-ms caps every jump";
      EXPECT_NE(std::find(kThreeServers.begin(), kThreeServers.end(), node), kThreeServers.end()) << node;
    }
  }
  for (const auto& n : kThreeServers) shifted |= env.ctx.clocks.offset(n).count() != 0;
  EXPECT_TRUE(shifted);
  EXPECT_TRUE(c.active());
  c.heal();
  for (const auto& n : kThreeServers) EXPECT_EQ(env.ctx.clocks.offset(n).count(), 0) << n;
  EXPECT_EQ(env.records().back().f, "clock-reset");
  EXPECT_FALSE(c.active());
}

TEST(ClockFamily, BumpTargetsAndSmallestMagnitudeFollowTheOptions) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  FaultOptions o = default_fault_options();
  o.set("clock-max-ms", 5000);
  o.set("clock-min-ms", 2000);
  o.set("nemesis-targets", "majority");
  ClockNemesis c(env.ctx, o);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 30; ++i) {
    c.start("clock-bump", rng);
    const nlohmann::json deltas = env.records().back().value["deltas"];
    EXPECT_EQ(deltas.size(), kThreeServers.size() / 2 + 1);
    for (const auto& [node, d] : deltas.items()) {
      EXPECT_GE(std::abs(d.get<long>()), 2000) << "--clock-min-ms";
      EXPECT_LE(std::abs(d.get<long>()), 5000);
    }
    c.heal();
  }
}

// --nemesis-targets clients: bumps and strobes shift client nodes only (a lock library reads
// its own wall clock), and the heal resets them too.
TEST(ClockFamily, ClientTargetsShiftOnlyClientsAndHealResetsThem) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  FaultOptions o = default_fault_options();
  o.set("clock-min-ms", 1000);
  o.set("nemesis-targets", "clients");
  ClockNemesis c(env.ctx, o);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 10; ++i) c.start("clock-bump", rng);
  for (const auto& r : env.records()) {
    for (const auto& [node, d] : r.value["deltas"].items()) {
      EXPECT_NE(std::find(kTwoClients.begin(), kTwoClients.end(), node), kTwoClients.end()) << node << " is no client";
    }
  }
  for (const auto& n : kThreeServers) EXPECT_EQ(env.ctx.clocks.offset(n).count(), 0) << n;
  bool shifted = false;
  for (const auto& n : kTwoClients) shifted |= env.ctx.clocks.offset(n).count() != 0;
  EXPECT_TRUE(shifted);
  c.heal();
  for (const auto& n : kTwoClients) EXPECT_EQ(env.ctx.clocks.offset(n).count(), 0) << n;
  c.start("clock-strobe", rng);
  for (const auto& node : env.records().back().value["targets"]) {
    EXPECT_NE(std::find(kTwoClients.begin(), kTwoClients.end(), node.get<std::string>()), kTwoClients.end()) << node;
  }
}

TEST(ClockFamily, StrobeFlipsEveryPeriodThenResets) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  ClockNemesis c(env.ctx, default_fault_options());
  c.replay("clock-strobe", {{"fault", "clock-strobe"}, {"targets", {"n2"}}, {"delta_ms", 200},
                            {"period_ms", 20}, {"duration_ms", 100}});
  std::vector<long> seen;
  for (int i = 0; i < 12; ++i) {
    c.tick();
    seen.push_back(env.ctx.clocks.offset("n2").count());
    env.time.advance(milliseconds(10));
  }
  EXPECT_EQ(seen, (std::vector<long>{200, 200, 0, 0, 200, 200, 0, 0, 200, 200, 0, 0}));
  EXPECT_EQ(env.ctx.clocks.offset("n1").count(), 0) << "only the targets strobe";
  EXPECT_FALSE(c.active()) << "the strobe ended after its duration";
  EXPECT_EQ(env.records().back().f, "clock-reset");
}

TEST(CrashFamily, KillServerTargetsAndRestartsAfterTheDelay) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  CrashNemesis c(env.ctx, fault_options({{"restart-ms", 100}}));
  c.replay("kill", {{"fault", "kill-server"}, {"targets", {"n1", "n3"}}, {"restart_ms", 100}});
  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].sig, SIGKILL);
  env.time.advance(milliseconds(99));
  c.tick();
  EXPECT_EQ(env.signals().size(), 2u);
  env.time.advance(milliseconds(1));
  c.tick();
  signals = env.signals();
  ASSERT_EQ(signals.size(), 4u);
  EXPECT_EQ(signals[2].sig, 0) << "started again";
  auto records = env.records();
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(records[records.size() - 2].f, "start");
  EXPECT_EQ(records[records.size() - 2].value["targets"], nlohmann::json({"n1", "n3"}));
  EXPECT_EQ(records.back().f, "ready") << "then waited until they answered";
  EXPECT_EQ(records.back().value["targets"], nlohmann::json({"n1", "n3"}));
}

TEST(CrashFamily, TargetSpecsPickTheRightNumberOfNodes) {
  std::mt19937_64 rng(1);
  std::vector<std::string> five = {"a", "b", "c", "d", "e"};
  EXPECT_EQ(pick_targets(five, "one", rng).size(), 1u);
  EXPECT_EQ(pick_targets(five, "minority", rng).size(), 2u);
  EXPECT_EQ(pick_targets(five, "majority", rng).size(), 3u);
  EXPECT_EQ(pick_targets(five, "all", rng).size(), 5u);
  EXPECT_EQ(pick_targets({"a", "b", "c"}, "minority", rng).size(), 1u);
  EXPECT_EQ(pick_targets({"a", "b", "c"}, "majority", rng).size(), 2u);
  EXPECT_EQ(pick_targets({"a"}, "minority", rng).size(), 1u) << "at least one";
  for (int i = 0; i < 50; ++i) {
    auto some = pick_targets(five, "random", rng);
    EXPECT_GE(some.size(), 1u);
    EXPECT_TRUE(std::is_sorted(some.begin(), some.end()));
  }
  EXPECT_THROW(pick_targets(five, "most", rng), std::invalid_argument);
  EXPECT_FALSE(is_target_spec("most"));
  EXPECT_TRUE(is_target_spec("majority"));
}

TEST(CrashFamily, KillServerHitsTheTargetSpecTheOptionsName) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  FaultOptions o = default_fault_options();
  o.set("restart-ms", 100);
  o.set("nemesis-targets", "majority");
  CrashNemesis c(env.ctx, o);
  std::mt19937_64 rng(4);
  for (int i = 0; i < 10; ++i) {
    c.start("kill-server", rng);
    ASSERT_EQ(env.records().back().f, "kill");
    EXPECT_EQ(env.records().back().value["targets"].size(), kThreeServers.size() / 2 + 1);
    c.heal();
  }
}

TEST(CrashFamily, KillClientRestartsAtOnceWithoutDelayAndRestartServerIsGraceful) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  CrashNemesis c(env.ctx, default_fault_options());
  std::mt19937_64 rng(2);
  c.start("kill-client", rng);
  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].sig, SIGKILL);
  EXPECT_EQ(signals[1].sig, 0);
  EXPECT_NE(std::find(kTwoClients.begin(), kTwoClients.end(), signals[0].node), kTwoClients.end());
  EXPECT_FALSE(c.active());
  c.start("restart-server", rng);
  signals = env.signals();
  ASSERT_EQ(signals.size(), 4u);
  EXPECT_EQ(signals[2].sig, SIGTERM);
  EXPECT_EQ(signals[3].sig, 0);
  auto records = env.records();
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(records[records.size() - 2].f, "restart");
  EXPECT_EQ(records.back().f, "ready");
  EXPECT_FALSE(records.back().value.contains("not_ready"));
}

// A restart whose second stop fails leaves nothing stopped off the record: the node it did
// stop is started again, and the "restart" line names what was stopped and what failed.
TEST(CrashFamily, ARestartThatFailsPartWayStartsWhatItStoppedAndSaysSo) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  CrashNemesis c(env.ctx, default_fault_options());
  env.failing_stop("n2");
  EXPECT_THROW(c.replay("restart", {{"fault", "restart-server"}, {"targets", {"n1", "n2"}}}), HarnessError);
  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].node, "n1");
  EXPECT_EQ(signals[0].sig, SIGTERM);
  EXPECT_EQ(signals[1].node, "n1");
  EXPECT_EQ(signals[1].sig, 0) << "n1 was stopped: it must be started again";
  auto records = env.records();
  ASSERT_EQ(records.size(), 1u) << "the restart is on the record";
  EXPECT_EQ(records[0].f, "restart");
  EXPECT_EQ(records[0].value["stopped"], nlohmann::json::array({"n1"}));
  EXPECT_TRUE(records[0].value["failed"].contains("n2")) << records[0].value.dump();
}

// A heal that one node (a silent ssh host) does not take returns, records the node as not
// healed with why, and reports it: the schedule then stops and the run names the host.
TEST(PartitionFamily, AHealASilentNodeMissesIsRecordedAndReported) {
  FakeNemesisEnv env(kTwoClients, kThreeServers);
  PartitionNemesis p(env.ctx, default_fault_options());
  std::mt19937_64 rng(1);
  p.start("partition-one", rng);
  env.silent("n2");
  EXPECT_THROW(p.heal(), HarnessError);
  auto records = env.records();
  ASSERT_EQ(records.back().f, "heal");
  EXPECT_EQ(records.back().value["not_healed"]["n2"], "no answer within 3000 ms") << records.back().value.dump();
  EXPECT_FALSE(p.active()) << "the family's fault is over; the node is the run's problem now";
}

}  // namespace
}  // namespace fencecheck::testing
