// The Redlock client against five (or three) real masters: the algorithm as RDOC specifies
// it, unlock-all on failure, the validity check after a pause while replies are in flight
// (Kleppmann's K4), and the outcome rule when instances do not answer.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "tests/backends/redlock/redlock_fixture.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

TEST_P(RedlockTest, AcquiresOnEveryMasterRefusesASecondClientAndReleases) {
  std::chrono::milliseconds setup = start_server();
  RecordProperty("setup_ms_5_masters", static_cast<int>(setup.count()));
  std::cout << "setup of 5 masters (" << GetParam() << "): " << setup.count() << " ms\n";
  EXPECT_EQ(server_->nodes(), (std::vector<std::string>{"n1", "n2", "n3", "n4", "n5"}));
  ASSERT_EQ(server_->client_config()["instances"].size(), 5u);

  auto a = client(), b = client();
  LockResult ga = from("c1", [&] { return a->acquire("k", 10s); });
  ASSERT_EQ(ga.outcome, Outcome::kOk) << ga.error;
  ASSERT_TRUE(ga.grant);
  EXPECT_EQ(ga.grant->token, std::nullopt) << "Redlock has no fencing token";
  EXPECT_EQ(ga.grant->owner.size(), 40u) << "20 random bytes, hex";
  ASSERT_TRUE(ga.grant->promise);
  EXPECT_EQ(ga.grant->promise->valid_ms, 9898) << "ttl − drift (100 ms + 2 ms), from the acquire's start";
  EXPECT_EQ(copies("k"), repeated(ga.grant->owner, 5)) << "one value on every instance";

  LockResult gb = from("c2", [&] { return b->acquire("k", 10s); });
  EXPECT_EQ(gb.outcome, Outcome::kFail);
  EXPECT_EQ(gb.error, "lock held by another client");
  EXPECT_FALSE(gb.not_sent);
  EXPECT_EQ(copies("k"), repeated(ga.grant->owner, 5)) << "b's unlock-all leaves a's value alone";

  // b cannot release a's lock with its own value.
  EXPECT_EQ(from("c2", [&] { return b->release(Grant{"k", std::nullopt, std::string(40, '0')}); }).error,
            "not held");
  EXPECT_EQ(from("c1", [&] { return a->release(*ga.grant); }).outcome, Outcome::kOk);
  EXPECT_EQ(copies("k"), repeated("", 5));
  LockResult again = from("c1", [&] { return a->release(*ga.grant); });
  EXPECT_EQ(again.outcome, Outcome::kFail);
  EXPECT_EQ(again.error, "not held");

  LockResult gb2 = from("c2", [&] { return b->acquire("k", 10s); });
  ASSERT_EQ(gb2.outcome, Outcome::kOk) << gb2.error;
  EXPECT_NE(gb2.grant->owner, ga.grant->owner);
}

TEST_P(RedlockTest, ExpiredLeaseIsNotHeldAndCanBeTaken) {
  start_server();
  auto a = client(), b = client();
  LockResult ga = from("c1", [&] { return a->acquire("k", 200ms); });
  ASSERT_EQ(ga.outcome, Outcome::kOk) << ga.error;
  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(from("c2", [&] { return b->acquire("k", 10s); }).outcome, Outcome::kOk);
  LockResult r = from("c1", [&] { return a->release(*ga.grant); });
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.error, "not held");
}

// RDOC step 5: a failed acquire unlocks every instance, the ones it did lock included.
TEST_P(RedlockTest, FailedAcquireUnlocksEveryInstanceItLocked) {
  start_server();
  auto a = client();
  plant("k", "other", {0, 1, 2});  // another client holds n1..n3
  LockResult g = from("c1", [&] { return a->acquire("k", 10s); });
  EXPECT_EQ(g.outcome, Outcome::kFail);
  EXPECT_EQ(g.error, "lock held by another client");
  EXPECT_EQ(copies("k"), (std::vector<std::string>{"other", "other", "other", "", ""}))
      << "n4 and n5 said OK, and were unlocked again";

  plant("k2", "other", {0, 1});  // a minority: three of five are enough
  LockResult g2 = from("c1", [&] { return a->acquire("k2", 10s); });
  ASSERT_EQ(g2.outcome, Outcome::kOk) << g2.error;
  std::string v = g2.grant->owner;
  EXPECT_EQ(copies("k2"), (std::vector<std::string>{"other", "other", v, v, v}));
}

// Kleppmann's K4: the client pauses after its SETs are written, for longer than the TTL;
// meanwhile the keys expire and b takes the lock. With the validity check (RDOC, redsync,
// node-redlock 4) a's acquire fails; without it (node-redlock 5 beta) both hold the lock.
TEST_P(RedlockTest, PauseWhileRepliesAreInFlightNeedsTheValidityCheck) {
  for (const std::string check : {"on", "off"}) {
    SCOPED_TRACE("validity_check=" + check);
    start_server({"validity_check=" + check, "stall_after_send_ms=1500"});
    auto a = client();
    auto b = client([](nlohmann::json& c) { c["stall_after_send_ms"] = 0; });
    const std::string key = "k4-" + check;
    const auto started = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration took{};
    auto paused = std::async(std::launch::async, [&] {
      LockResult r = from("c1", [&] { return a->acquire(key, 1000ms); });
      took = std::chrono::steady_clock::now() - started;
      return r;
    });
    std::this_thread::sleep_for(1200ms);  // a's keys have expired; a is still "paused"
    LockResult gb = from("c2", [&] { return b->acquire(key, 10s); });
    ASSERT_EQ(gb.outcome, Outcome::kOk) << gb.error;
    LockResult ga = paused.get();
    if (check == "on") {
      EXPECT_EQ(ga.outcome, Outcome::kFail);
      EXPECT_NE(ga.error.find("validity expired"), std::string::npos) << ga.error;
    } else {
      ASSERT_EQ(ga.outcome, Outcome::kOk) << "both a and b now believe they hold " << key;
      // The promise is the one the check would have measured against: already over when
      // the acquire returned (the checker's granted-expired).
      ASSERT_TRUE(ga.grant->promise);
      EXPECT_EQ(ga.grant->promise->valid_ms, 988);
      EXPECT_LT(std::chrono::milliseconds(*ga.grant->promise->valid_ms), took);
    }
    EXPECT_EQ(copies(key), repeated(gb.grant->owner, 5)) << "a's unlock-all must not touch b's lock";
    server_->teardown(test_deadline());
  }
}

TEST_P(RedlockTest, StallsOnlyOnEveryKthAcquire) {
  start_server({"stall_after_send_ms=400", "stall_every=2"});
  auto a = client();
  for (int i = 1; i <= 4; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    LockResult g = from("c1", [&] { return a->acquire("k", 10s); });
    auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
    EXPECT_EQ(took >= 400ms, i % 2 == 0) << "acquire " << i;
    ASSERT_EQ(from("c1", [&] { return a->release(*g.grant); }).outcome, Outcome::kOk);
  }
}

// Paused masters never answer: with two of five paused the other three still make a
// quorum; with three paused, the SETs and the unlocks on them are unanswered, so a quorum
// may hold a's value: the acquire cannot say fail, it is unknown.
TEST_P(RedlockTest, UnansweredMastersMakeAnAcquireUnknownOnlyWhenAQuorumIsUndecided) {
  start_server({"instance_timeout_ms=100"});
  auto a = client();
  server_->pause("n1", test_deadline());
  server_->pause("n2", test_deadline());
  LockResult g = from("c1", [&] { return a->acquire("k", 10s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  EXPECT_EQ(from("c1", [&] { return a->release(*g.grant); }).outcome, Outcome::kOk) << "deleted on 3 of 5";

  server_->pause("n3", test_deadline());
  LockResult u = from("c1", [&] { return a->acquire("k2", 10s); });
  EXPECT_EQ(u.outcome, Outcome::kUnknown) << u.error;
  EXPECT_NE(u.error.find("3 of 5 instances may still hold"), std::string::npos) << u.error;
  for (const std::string n : {"n1", "n2", "n3"}) server_->resume(n, test_deadline());
  // a's unlocks wait behind its SETs on the same connections, so the resumed masters apply
  // both, in order, and nothing of a's is left to block the next client.
  auto b = client();
  EXPECT_EQ(from("c2", [&] { return b->acquire("k2", 10s); }).outcome, Outcome::kOk);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RedlockTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
