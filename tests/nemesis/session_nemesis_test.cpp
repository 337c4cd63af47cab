// The session family (kill-session) against a recording env: it arms, ends the sessions of
// the client whose acquire completes next and of no later one, records how many it ended
// (or why none), re-arms from a recorded "arm" line, and heal disarms it.
#include "nemesis/session_nemesis.h"

#include <gtest/gtest.h>

#include "nemesis/fault_registry.h"
#include "platform/errors.h"
#include "tests/nemesis/fake_env.h"
#include "tests/nemesis/node_names.h"

namespace fencecheck::testing {
namespace {

class SessionFixture : public ::testing::Test {
 protected:
  FakeNemesisEnv env{kFiveClients, kThreeServers};
  SessionNemesis nemesis{env.ctx, default_fault_options()};
  std::mt19937_64 rng{1};
};

TEST_F(SessionFixture, ArmsAndEndsOnlyTheNextHoldersSessions) {
  env.open_sessions("c2", 1);
  env.open_sessions("c3", 2);
  env.publish(LockEventKind::kAcquireSent, "c3");  // not a grant
  nemesis.start("kill-session", rng);
  ASSERT_EQ(env.records().size(), 1u);
  EXPECT_EQ(env.records()[0].f, "arm") << "the arming is recorded, for replays";
  EXPECT_EQ(env.records()[0].value, nlohmann::json({{"fault", "kill-session"}}));
  EXPECT_TRUE(nemesis.active());
  EXPECT_FALSE(nemesis.acting()) << "armed is not in force";
  EXPECT_EQ(nemesis.describe_active(), std::vector<std::string>{"kill-session (armed)"});
  env.publish(LockEventKind::kAcquireEnded, "c3");
  env.publish(LockEventKind::kRelease, "c3");
  EXPECT_TRUE(env.sessions_killed().empty()) << "only a grant fires it";

  env.acquired("c2");
  EXPECT_EQ(env.sessions_killed(), std::vector<std::string>{"c2"});
  ASSERT_EQ(env.records().size(), 2u);
  EXPECT_EQ(env.records()[1].f, "kill-session");
  EXPECT_EQ(env.records()[1].value,
            nlohmann::json({{"fault", "kill-session"}, {"targets", {"c2"}}, {"sessions", 1}}));
  EXPECT_FALSE(env.records()[1].planned) << "a lock event fired it, not the schedule";
  EXPECT_FALSE(nemesis.active()) << "over once done";
  EXPECT_TRUE(nemesis.describe_active().empty());

  env.acquired("c3");
  EXPECT_EQ(env.sessions_killed(), std::vector<std::string>{"c2"}) << "one grant per arming";
  EXPECT_EQ(env.records().size(), 2u);
  nemesis.start("kill-session", rng);
  env.acquired("c3");
  EXPECT_EQ(env.sessions_killed(), (std::vector<std::string>{"c2", "c3"}));
  EXPECT_EQ(env.records().back().value["sessions"], 2);
}

TEST_F(SessionFixture, NoSessionEndedIsRecordedNotAppliedWithWhy) {
  nemesis.start("kill-session", rng);
  env.acquired("c4");  // it has none open
  const Recorded none = env.records().back();
  EXPECT_EQ(none.f, "kill-session");
  EXPECT_EQ(none.value["sessions"], 0);
  EXPECT_EQ(none.value["not_applied"], "c4 had no session open on the servers");

  env.ctx.servers.kill("n2", Deadline::after(std::chrono::seconds(1)));  // another family's crash
  env.open_sessions("c1", 1);
  nemesis.start("kill-session", rng);
  env.acquired("c1");
  const Recorded down = env.records().back();
  EXPECT_EQ(down.value["targets"], nlohmann::json({"c1"}));
  EXPECT_EQ(down.value["sessions"], 0);
  EXPECT_NE(down.value.value("not_applied", "").find("down"), std::string::npos) << down.value.dump();
  EXPECT_FALSE(nemesis.active());
}

TEST_F(SessionFixture, AKillTheServersRefuseIsOnTheRecordAndStopsTheRun) {
  env.failing_kill_sessions();
  nemesis.start("kill-session", rng);
  EXPECT_THROW(env.acquired("c1"), HarnessError) << "on the client's thread: the run ends saying why";
  const Recorded failed = env.records().back();
  EXPECT_EQ(failed.f, "kill-session");
  EXPECT_EQ(failed.value["not_applied"], "the server did not answer (a test's failure)");
  EXPECT_FALSE(nemesis.active());
}

TEST_F(SessionFixture, ReplayReArmsFromTheArmLineAndTheKillFollowsByItself) {
  env.open_sessions("c5", 1);
  nemesis.replay("arm", {{"fault", "kill-session"}});
  EXPECT_TRUE(nemesis.active());
  EXPECT_EQ(env.records().back().f, "arm") << "a replayed line is recorded again";
  nemesis.replay("kill-session", {{"fault", "kill-session"}, {"targets", {"c1"}}, {"sessions", 1}});
  EXPECT_TRUE(env.sessions_killed().empty()) << "the recorded kill is not applied again: the grant fires it";
  env.acquired("c5");  // whoever acquires next, as in the original run
  EXPECT_EQ(env.sessions_killed(), std::vector<std::string>{"c5"});
  EXPECT_THROW(nemesis.replay("pause", {{"fault", "kill-session"}}), std::invalid_argument);
  EXPECT_THROW(nemesis.replay("arm", {{"fault", "pause-holder"}, {"ms", 10}}), std::invalid_argument);
  EXPECT_THROW(nemesis.start("pause-holder", rng), std::invalid_argument);
}

TEST_F(SessionFixture, HealDisarms) {
  env.open_sessions("c1", 1);
  nemesis.start("kill-session", rng);
  nemesis.heal();
  EXPECT_FALSE(nemesis.active());
  env.acquired("c1");
  EXPECT_TRUE(env.sessions_killed().empty());
  ASSERT_EQ(env.records().size(), 1u) << "only the arming";
  nemesis.heal();  // idempotent
  EXPECT_FALSE(nemesis.active());
}

// The registry row: its own family, what it needs, ends by itself.
TEST(SessionRegistry, KillSessionIsALockAwareFaultOfItsOwnFamily) {
  const FaultInfo* f = find_fault("kill-session");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->family, "session");
  EXPECT_EQ(f->needs, (Capabilities{Capability::kRunsServers, Capability::kKillsSessions}));
  EXPECT_TRUE(f->self_timed) << "the schedule never heals it early: it waits for a grant";
  EXPECT_EQ(families_of({"kill-session", "pause-holder"}), (std::vector<std::string>{"pause", "session"}));
}

}  // namespace
}  // namespace fencecheck::testing
