// NemesisSchedule with a recording env: it starts only configured faults, is seeded, and
// leaves nothing paused once stopped.
#include "nemesis/schedule.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <thread>

#include "tests/nemesis/fake_env.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;

const std::vector<std::string> kClients = {"c1", "c2", "c3", "c4", "c5"};
const std::vector<std::string> kServers = {"n1", "n2", "n3"};

// Polls pred for up to `limit`; true once it holds.
bool eventually(const std::function<bool()>& pred, milliseconds limit = milliseconds(5000)) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return pred();
}

TEST(NemesisSchedule, NoFaultsNeverStartsAnything) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({}, milliseconds(1), 1, env, NemesisOptions{milliseconds(5)});
  s.start();
  s.on_acquired("c1");
  std::this_thread::sleep_for(milliseconds(100));
  s.stop();
  EXPECT_TRUE(env.signals().empty());
  EXPECT_TRUE(env.records().empty());
  EXPECT_TRUE(s.describe_active().empty());
}

TEST(NemesisSchedule, PauseClientStartsPausesAndStopLeavesNothingPaused) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-client"}, milliseconds(30), 1, env, NemesisOptions{milliseconds(20)});
  s.start();
  ASSERT_TRUE(eventually([&] { return env.stopped_nodes().size() >= 3; }))
      << "expected a pause every ~50 ms";
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  for (const auto& node : env.stopped_nodes()) {
    EXPECT_NE(std::find(kClients.begin(), kClients.end(), node), kClients.end()) << node;
  }
  auto records = env.records();
  ASSERT_GE(records.size(), 6u);
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].f, i % 2 == 0 ? "pause" : "resume") << "record " << i;
  }
  EXPECT_TRUE(s.describe_active().empty());
}

TEST(NemesisSchedule, StopHealsAPauseStillInForce) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-server"}, milliseconds(1), 3, env, NemesisOptions{milliseconds(60'000)});
  s.start();
  ASSERT_TRUE(eventually([&] { return !env.signals().empty(); }));
  ASSERT_EQ(s.describe_active().size(), 1u);
  EXPECT_EQ(s.describe_active()[0].rfind("pause-server n", 0), 0u) << s.describe_active()[0];
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  EXPECT_EQ(env.stopped_nodes().size(), 1u) << "one pause at a time, and this one never ended";
}

TEST(NemesisSchedule, DestructorHealsToo) {
  FakeNemesisEnv env(kClients, kServers);
  {
    NemesisSchedule s({"pause-client"}, milliseconds(1), 3, env, NemesisOptions{milliseconds(60'000)});
    s.start();
    ASSERT_TRUE(eventually([&] { return !env.signals().empty(); }));
  }
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

TEST(NemesisSchedule, HolderPauseHitsTheNodeThatAcquires) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-holder"}, milliseconds(5), 3, env, NemesisOptions{milliseconds(60'000)});
  s.start();
  ASSERT_TRUE(eventually([&] { return s.describe_active() == std::vector<std::string>{"pause-holder (armed)"}; }));
  s.on_acquired("c4");
  EXPECT_EQ(env.stopped_nodes(), std::vector<std::string>{"c4"});
  s.stop();
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

// The first n pause targets of a schedule over `faults` seeded with `seed`.
std::vector<std::string> first_targets(std::uint64_t seed, std::size_t n) {
  FakeNemesisEnv env(kClients, kServers);
  NemesisSchedule s({"pause-client", "pause-server"}, milliseconds(2), seed, env,
                    NemesisOptions{milliseconds(2)});
  s.start();
  bool enough = eventually([&] { return env.stopped_nodes().size() >= n; });
  s.stop();
  EXPECT_TRUE(enough);
  auto targets = env.stopped_nodes();
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

TEST(NemesisSchedule, UnknownFaultIsRejected) {
  FakeNemesisEnv env(kClients, kServers);
  EXPECT_THROW(NemesisSchedule({"pause-holder", "bogus"}, milliseconds(5), 1, env, NemesisOptions{}),
               std::invalid_argument);
}

}  // namespace
}  // namespace fencecheck::testing
