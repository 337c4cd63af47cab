// PauseNemesis against a recording NemesisEnv: who is paused, when, and what is recorded.
#include "nemesis/pause_nemesis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <set>
#include <stdexcept>

#include "tests/nemesis/fake_env.h"
#include "tests/nemesis/node_names.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;


struct PauseFixture : ::testing::Test {
  FakeNemesisEnv env{kFiveClients, kThreeServers};
  std::mt19937_64 rng{7};
  PauseNemesis nemesis{env.ctx, with_pause(milliseconds(50))};
};

TEST_F(PauseFixture, HolderArmsThenPausesExactlyTheAcquiringNodeOnce) {
  nemesis.start("pause-holder", rng);
  EXPECT_TRUE(env.signals().empty()) << "arming must not pause anyone yet";
  EXPECT_TRUE(nemesis.active());
  EXPECT_EQ(nemesis.describe_active(), std::vector<std::string>{"pause-holder (armed)"});
  EXPECT_FALSE(nemesis.acting()) << "armed is not in force: a stall then is the bench's";

  env.acquired("c3");
  EXPECT_TRUE(nemesis.acting());
  env.acquired("c4");  // already paused someone: disarmed

  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].node, "c3");
  EXPECT_EQ(signals[0].sig, SIGSTOP);
  auto records = env.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].f, "arm") << "the arming instant is recorded, for replays";
  EXPECT_EQ(records[0].value, nlohmann::json({{"fault", "pause-holder"}, {"ms", 50}}));
  EXPECT_EQ(records[1].f, "pause");
  EXPECT_EQ(records[1].value["fault"], "pause-holder");
  EXPECT_EQ(records[1].value["targets"], nlohmann::json::array({"c3"}));
  EXPECT_EQ(nemesis.describe_active(), std::vector<std::string>{"pause-holder c3"});
}

// pause-acquirer stops a client whose acquire has been in flight for 20 ms, never one whose
// acquire came back sooner, nor one that sent it while the fault was not armed.
TEST_F(PauseFixture, AcquirerPausesOnlyAClientWhoseAcquireIsStillInFlight) {
  env.publish(LockEventKind::kAcquireSent, "c1");  // not armed yet: not tracked
  nemesis.start("pause-acquirer", rng);
  EXPECT_EQ(nemesis.describe_active(), std::vector<std::string>{"pause-acquirer (armed)"});
  env.publish(LockEventKind::kAcquireSent, "c2");
  env.time.advance(milliseconds(10));
  env.publish(LockEventKind::kAcquireEnded, "c2");  // came back within 10 ms: skipped
  env.publish(LockEventKind::kAcquireSent, "c4");
  env.time.advance(milliseconds(19));
  nemesis.tick();
  EXPECT_TRUE(env.signals().empty()) << "paused before its acquire was 20 ms in flight";
  ASSERT_TRUE(nemesis.due().has_value());
  EXPECT_EQ(*nemesis.due(), env.time.now() + milliseconds(1)) << "due when c4's acquire is 20 ms old";
  env.time.advance(milliseconds(1));
  nemesis.tick();
  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].node, "c4");
  EXPECT_EQ(signals[0].sig, SIGSTOP);
  auto records = env.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].value, nlohmann::json({{"fault", "pause-acquirer"}, {"ms", 50}}));
  EXPECT_EQ(records[1].value["targets"], nlohmann::json::array({"c4"}));
  // Disarmed: another acquire in flight is left alone, and the pause ends after its time.
  env.publish(LockEventKind::kAcquireSent, "c5");
  env.time.advance(milliseconds(50));
  nemesis.tick();
  signals = env.signals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[1].sig, SIGCONT);
  EXPECT_FALSE(nemesis.active());
}

// pause-after-send arms the clients; the acquire that takes the pause is "in" it, but the
// history says "pause" only once the library says it paused, and "resume" when that acquire
// comes back; no signal is sent.
TEST_F(PauseFixture, AfterSendRecordsThePauseOnlyOnceTheLibrarySaysItPaused) {
  nemesis.start("pause-after-send", rng);
  EXPECT_EQ(env.armed_inside(), milliseconds(50)) << "the clients carry the pause, not the nemesis";
  EXPECT_EQ(nemesis.describe_active(), std::vector<std::string>{"pause-after-send (armed)"});
  env.publish(LockEventKind::kAcquireSent, "c3", "l0", [](LockEvent& e) { e.pause_inside = milliseconds(50); });
  EXPECT_EQ(nemesis.describe_active(), std::vector<std::string>{"pause-after-send c3"});
  ASSERT_EQ(env.records().size(), 1u) << "no pause on the record before the library paused";
  env.publish(LockEventKind::kNotice, "c4", "l0", [](LockEvent& e) { e.notice = "paused"; });
  ASSERT_EQ(env.records().size(), 1u) << "another client's notice is not this pause";
  env.publish(LockEventKind::kNotice, "c3", "l0", [](LockEvent& e) { e.notice = "paused"; });
  env.publish(LockEventKind::kAcquireEnded, "c4");  // another client's acquire ends nothing
  EXPECT_TRUE(nemesis.active());
  env.publish(LockEventKind::kAcquireEnded, "c3", "l0", [](LockEvent& e) { e.paused_inside = true; });
  EXPECT_FALSE(nemesis.active());
  EXPECT_TRUE(env.signals().empty()) << "the library pauses itself; nothing is signalled";
  auto records = env.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].f, "arm");
  EXPECT_EQ(records[1].f, "pause");
  EXPECT_EQ(records[1].value["targets"], nlohmann::json::array({"c3"}));
  EXPECT_EQ(records[1].value["ms"], 50);
  EXPECT_FALSE(records[1].value.contains("not_applied"));
  EXPECT_EQ(records[2].f, "resume");
  EXPECT_EQ(records[2].value["fault"], "pause-after-send");
}

// An acquire that carried the pause but came back without the library pausing (it sent no
// lock command, or failed first) is recorded as a pause not applied, never as a pause.
TEST_F(PauseFixture, AfterSendThatNeverPausedIsRecordedNotApplied) {
  nemesis.start("pause-after-send", rng);
  env.publish(LockEventKind::kAcquireSent, "c2", "l0", [](LockEvent& e) { e.pause_inside = milliseconds(50); });
  env.publish(LockEventKind::kAcquireEnded, "c2", "l0", [](LockEvent& e) { e.paused_inside = false; });
  auto records = env.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].f, "pause");
  EXPECT_TRUE(records[1].value.contains("not_applied")) << records[1].value.dump();
  EXPECT_FALSE(nemesis.active());
  // Unknown (the worker did not answer): not claimed either.
  nemesis.start("pause-after-send", rng);
  env.publish(LockEventKind::kAcquireSent, "c2", "l0", [](LockEvent& e) { e.pause_inside = milliseconds(50); });
  env.publish(LockEventKind::kAcquireEnded, "c2");
  records = env.records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_NE(records[3].value.value("not_applied", "").find("unknown"), std::string::npos) << records[3].value.dump();
}

// The notice and the completion travel apart: a completion that says "paused" before its
// notice came still puts the pause on the record (then the resume), and the late notice adds
// nothing.
TEST_F(PauseFixture, AfterSendWhoseNoticeComesLateIsStillRecordedOnce) {
  nemesis.start("pause-after-send", rng);
  env.publish(LockEventKind::kAcquireSent, "c1", "l0", [](LockEvent& e) { e.pause_inside = milliseconds(50); });
  env.publish(LockEventKind::kAcquireEnded, "c1", "l0", [](LockEvent& e) { e.paused_inside = true; });
  env.publish(LockEventKind::kNotice, "c1", "l0", [](LockEvent& e) { e.notice = "paused"; });
  auto records = env.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].f, "pause");
  EXPECT_FALSE(records[1].value.contains("not_applied"));
  EXPECT_EQ(records[2].f, "resume");
}

// pause-acquirer decides to stop c4 while its acquire is in flight; if the acquire comes
// back while the SIGSTOP is under way, the acquire's end (and with it the completion the
// session records) waits until the stop is done: the history never shows a pause of a
// client whose acquire had already returned.
TEST_F(PauseFixture, AcquirerNeverStopsAClientWhoseAcquireReturnedFirst) {
  nemesis.start("pause-acquirer", rng);
  env.publish(LockEventKind::kAcquireSent, "c4");
  env.time.advance(milliseconds(20));
  std::atomic<bool> ended{false};
  std::atomic<bool> ended_during_pause{false};
  std::thread client;
  env.on_pause([&](const std::string&) {
    // The reply arrives now, on the client's thread, while the stop is being made.
    client = std::thread([&] {
      env.publish(LockEventKind::kAcquireEnded, "c4");
      ended = true;
    });
    std::this_thread::sleep_for(milliseconds(200));
    ended_during_pause = ended.load();
  });
  nemesis.tick();
  client.join();
  EXPECT_FALSE(ended_during_pause) << "the acquire came back before its client's SIGSTOP took effect";
  EXPECT_TRUE(ended);
  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].node, "c4");
}

TEST_F(PauseFixture, ResumesOnlyAfterThePauseDuration) {
  nemesis.start("pause-holder", rng);
  env.acquired("c2");
  nemesis.tick();
  EXPECT_EQ(env.signals().size(), 1u) << "resumed before the 50 ms were up";
  EXPECT_TRUE(nemesis.active());

  env.time.advance(milliseconds(49));
  nemesis.tick();
  EXPECT_EQ(env.signals().size(), 1u) << "resumed before the 50 ms were up";
  env.time.advance(milliseconds(1));
  nemesis.tick();
  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].sig, SIGSTOP);
  EXPECT_EQ(signals[1].sig, SIGCONT);
  EXPECT_EQ(signals[1].node, "c2");
  auto records = env.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].f, "pause");
  EXPECT_EQ(records[2].f, "resume");
  EXPECT_EQ(records[2].value["fault"], "pause-holder");
  EXPECT_EQ(records[2].value["targets"], nlohmann::json::array({"c2"}));
  EXPECT_FALSE(nemesis.active());
  EXPECT_TRUE(nemesis.describe_active().empty());

  env.acquired("c1");  // a resumed pause-holder is not re-armed
  EXPECT_EQ(env.signals().size(), 2u);
}

// Starts `fault` under many seeds and returns every node it paused.
std::set<std::string> targets_over_seeds(FakeNemesisEnv& env, PauseNemesis& n, const std::string& fault) {
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    std::mt19937_64 rng(seed);
    n.start(fault, rng);
    n.heal();
  }
  std::set<std::string> targets;
  for (const auto& node : env.stopped_nodes()) targets.insert(node);
  return targets;
}

TEST_F(PauseFixture, PauseClientPicksAmongClientNodes) {
  auto targets = targets_over_seeds(env, nemesis, "pause-client");
  EXPECT_EQ(targets, std::set<std::string>(kFiveClients.begin(), kFiveClients.end()));
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  EXPECT_EQ(env.records()[0].value["fault"], "pause-client");
}

TEST_F(PauseFixture, PauseServerPicksAmongServerNodes) {
  auto targets = targets_over_seeds(env, nemesis, "pause-server");
  EXPECT_EQ(targets, std::set<std::string>(kThreeServers.begin(), kThreeServers.end()));
  EXPECT_EQ(env.records()[0].value["fault"], "pause-server");
}

TEST_F(PauseFixture, OnlyOnePauseAtATime) {
  nemesis.start("pause-client", rng);
  nemesis.start("pause-server", rng);
  nemesis.start("pause-client", rng);
  nemesis.start("pause-holder", rng);
  env.acquired("c1");
  EXPECT_EQ(env.signals().size(), 1u);
  EXPECT_EQ(env.records().size(), 1u);
}

TEST_F(PauseFixture, ArmedHolderBlocksOtherPauses) {
  nemesis.start("pause-holder", rng);
  nemesis.start("pause-server", rng);
  EXPECT_TRUE(env.signals().empty());
}

TEST_F(PauseFixture, HealResumesImmediatelyAndIsIdempotent) {
  PauseNemesis long_pause(env.ctx, with_pause(milliseconds(60'000)));
  long_pause.start("pause-client", rng);
  long_pause.heal();
  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[1].sig, SIGCONT);
  EXPECT_EQ(signals[1].node, signals[0].node);
  EXPECT_EQ(env.records().back().f, "resume");
  EXPECT_FALSE(long_pause.active());
  long_pause.heal();
  EXPECT_EQ(env.signals().size(), 2u);
}

TEST_F(PauseFixture, HealDisarmsTheHolderPause) {
  nemesis.start("pause-holder", rng);
  nemesis.heal();
  EXPECT_FALSE(nemesis.active());
  env.acquired("c1");
  EXPECT_TRUE(env.signals().empty());
  ASSERT_EQ(env.records().size(), 1u) << "only the arming: no pause was in force";
  EXPECT_EQ(env.records()[0].f, "arm");
}

TEST_F(PauseFixture, ReplayPausesTheSameNodeForTheSameTimeAndReArmsTheHolder) {
  nemesis.replay("pause", {{"fault", "pause-server"}, {"targets", {"n2"}}, {"ms", 70}});
  EXPECT_EQ(env.stopped_nodes(), std::vector<std::string>{"n2"});
  env.time.advance(milliseconds(69));
  nemesis.tick();
  EXPECT_TRUE(nemesis.active());
  env.time.advance(milliseconds(1));
  nemesis.tick();
  EXPECT_FALSE(nemesis.active());
  nemesis.replay("resume", {{"fault", "pause-server"}, {"targets", {"n2"}}});  // follows by itself
  EXPECT_TRUE(env.every_stop_resumed_in_order());

  nemesis.replay("arm", {{"fault", "pause-holder"}, {"ms", 30}});
  nemesis.replay("pause", {{"fault", "pause-holder"}, {"targets", {"c1"}}, {"ms", 30}});  // no-op
  env.acquired("c4");  // whoever acquires next is paused, as in the original run
  EXPECT_EQ(env.stopped_nodes(), (std::vector<std::string>{"n2", "c4"}));
  EXPECT_THROW(nemesis.replay("partition", {{"fault", "pause-client"}}), std::invalid_argument);
}

// freeze-…: the whole node, through NodeProcesses::freeze (docker pause), never a SIGSTOP;
// thawed after --pause-ms; one at a time with the pauses (same family); replayable.
TEST_F(PauseFixture, FreezeFreezesTheWholeNodeAndThawsAfterThePause) {
  nemesis.start("freeze-server", rng);
  auto signals = env.signals();
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].sig, FakeNemesisEnv::kFrozen) << "a freeze is not a SIGSTOP";
  EXPECT_TRUE(std::count(kThreeServers.begin(), kThreeServers.end(), signals[0].node));
  nemesis.start("pause-client", rng);
  EXPECT_EQ(env.signals().size(), 1u) << "one pause or freeze at a time";
  env.time.advance(milliseconds(50));
  nemesis.tick();
  signals = env.signals();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[1].sig, FakeNemesisEnv::kThawed);
  EXPECT_EQ(signals[1].node, signals[0].node);
  auto records = env.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].value["fault"], "freeze-server");
  EXPECT_EQ(records[1].f, "resume");

  nemesis.replay("pause", {{"fault", "freeze-client"}, {"targets", {"c4"}}, {"ms", 10}});
  ASSERT_EQ(env.signals().size(), 3u);
  EXPECT_EQ(env.signals()[2].node, "c4");
  EXPECT_EQ(env.signals()[2].sig, FakeNemesisEnv::kFrozen);
  nemesis.heal();
  EXPECT_EQ(env.signals().back().sig, FakeNemesisEnv::kThawed);
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

TEST(PauseNemesis, NoServerNodesMeansNoPause) {
  FakeNemesisEnv env(kFiveClients, {});
  PauseNemesis n(env.ctx, with_pause(milliseconds(50)));
  std::mt19937_64 rng(1);
  n.start("pause-server", rng);
  EXPECT_TRUE(env.signals().empty());
  EXPECT_FALSE(n.active());
}

TEST_F(PauseFixture, UnknownFaultIsRejected) {
  EXPECT_THROW(nemesis.start("partition-halves", rng), std::invalid_argument);
  EXPECT_TRUE(env.signals().empty());
}

}  // namespace
}  // namespace fencecheck::testing
