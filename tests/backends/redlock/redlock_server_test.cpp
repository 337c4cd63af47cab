// The redlock LockServer: masters killed and restarted through it, the quorum as the
// client sees it with one, two, three and five of five masters gone, the n=3 option, and
// Kleppmann's K5 (a crash-restart without persistence hands the lock out twice).
#include <gtest/gtest.h>

#include "tests/backends/redlock/redlock_fixture.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

TEST_P(RedlockTest, QuorumIsAMajorityOfFiveMasters) {
  start_server();
  auto a = client();
  server_->kill("n1", test_deadline());
  EXPECT_FALSE(server_->running("n1"));
  LockResult four = from("c1", [&] { return a->acquire("k", 10s); });
  ASSERT_EQ(four.outcome, Outcome::kOk) << "4 of 5 up: " << four.error;
  EXPECT_EQ(from("c1", [&] { return a->release(*four.grant); }).outcome, Outcome::kOk);

  server_->kill("n2", test_deadline());
  LockResult three = from("c1", [&] { return a->acquire("k", 10s); });
  ASSERT_EQ(three.outcome, Outcome::kOk) << "3 of 5 up: " << three.error;
  EXPECT_EQ(from("c1", [&] { return a->release(*three.grant); }).outcome, Outcome::kOk);

  server_->kill("n3", test_deadline());
  LockResult two = from("c1", [&] { return a->acquire("k", 10s); });
  EXPECT_EQ(two.outcome, Outcome::kFail) << "2 of 5 up";
  EXPECT_FALSE(two.not_sent) << "n4 and n5 got the SET";
  EXPECT_NE(two.error.find("no quorum: 2 locked"), std::string::npos) << two.error;
  EXPECT_EQ(copies("k"), (std::vector<std::string>{"?", "?", "?", "", ""})) << "n4 and n5 unlocked again";

  server_->kill("n4", test_deadline());
  server_->kill("n5", test_deadline());
  LockResult none = from("c1", [&] { return a->acquire("k", 10s); });
  EXPECT_EQ(none.outcome, Outcome::kFail);
  EXPECT_TRUE(none.not_sent) << none.error;

  // The same client finds the restarted masters again.
  for (const std::string n : {"n1", "n2", "n3", "n4", "n5"}) server_->start(n);
  EXPECT_EQ(from("c1", [&] { return a->acquire("k", 10s); }).outcome, Outcome::kOk);
}

// A release reaching too few masters: deleted on two, three down. Those three may still
// hold the value (a partition looks the same as a crash), so whether the lock is still held
// is unknown.
TEST_P(RedlockTest, ReleaseWithAMajorityDownIsUnknown) {
  start_server();
  auto a = client();
  LockResult g = from("c1", [&] { return a->acquire("k", 10s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  for (const std::string n : {"n1", "n2", "n3"}) server_->kill(n, test_deadline());
  LockResult r = from("c1", [&] { return a->release(*g.grant); });
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.error;
  EXPECT_NE(r.error.find("2 deleted"), std::string::npos) << r.error;
}

TEST_P(RedlockTest, ThreeMastersWithOptionN) {
  start_server({"n=3"});
  EXPECT_EQ(server_->nodes(), (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(server_->client_config()["instances"].size(), 3u);
  EXPECT_FALSE(server_->running("n4"));
  auto a = client();
  server_->kill("n1", test_deadline());
  LockResult two = from("c1", [&] { return a->acquire("k", 10s); });
  ASSERT_EQ(two.outcome, Outcome::kOk) << "2 of 3: " << two.error;
  ASSERT_EQ(from("c1", [&] { return a->release(*two.grant); }).outcome, Outcome::kOk);
  server_->kill("n2", test_deadline());
  LockResult one = from("c1", [&] { return a->acquire("k", 10s); });
  EXPECT_EQ(one.outcome, Outcome::kFail) << "1 of 3";
  EXPECT_EQ(copies("k"), (std::vector<std::string>{"?", "?", ""}));
}

// K5: a holds the lock on all five; three masters crash and restart at once. Without
// persistence they forget a's value and b gets a quorum while a still holds the lock; with
// appendfsync always they remember it.
TEST_P(RedlockTest, CrashRestartOfAMajorityHandsTheLockOutTwiceWithoutPersistence) {
  for (const std::string level : {"none", "always"}) {
    SCOPED_TRACE("persistence=" + level);
    start_server({"persistence=" + level});
    auto a = client(), b = client();
    LockResult ga = from("c1", [&] { return a->acquire("k", 30s); });
    ASSERT_EQ(ga.outcome, Outcome::kOk) << ga.error;
    for (const std::string n : {"n1", "n2", "n3"}) {
      server_->kill(n, test_deadline());
      server_->start(n);
    }
    LockResult gb = from("c2", [&] { return b->acquire("k", 30s); });
    LockResult ra = from("c1", [&] { return a->release(*ga.grant); });
    if (level == "none") {
      EXPECT_EQ(gb.outcome, Outcome::kOk) << "b got n1..n3 while a still holds: " << gb.error;
      EXPECT_EQ(ra.outcome, Outcome::kFail) << "a's value survives on 2 of 5 only";
      EXPECT_EQ(ra.error, "not held");
    } else {
      EXPECT_EQ(gb.outcome, Outcome::kFail) << gb.error;
      EXPECT_EQ(ra.outcome, Outcome::kOk) << ra.error;
    }
    server_->teardown(test_deadline());
  }
}

}  // namespace
}  // namespace fencecheck::testing
