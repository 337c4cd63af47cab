// The nats backend against real nats-server 2.9 (label `integration`), under each runtime
// (local; netns as root): a 3-node JetStream cluster started with its bucket current and a
// stream leader named; grant, refusal, release and a grant over the release's marker with
// a higher revision; a stale release refused; a key gone after the max age; one node
// killed and restarted; every node killed at once and restarted, after which the bucket
// serves again and revisions go on growing (a process crash loses nothing the kernel took).
#include <iostream>
#include <thread>

#include "backends/nats/nats_server.h"
#include "tests/backends/server_fixture.h"
#include "tests/runtime/test_util.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

class NatsTest : public BackendServerTest {
 protected:
  NatsTest() : BackendServerTest("nats", {"n1", "n2", "n3", "c1", "c2"}) {}
  // Acquires key from node until it is granted or `within` passes; the last result.
  LockResult acquire_until_granted(LockClient& client, const std::string& node, const std::string& key,
                                   Millis within) {
    auto t0 = std::chrono::steady_clock::now();
    LockResult r;
    do {
      r = from(node, [&] { return client.acquire(key, 1000ms); });
      if (r.outcome == Outcome::kOk) return r;
      std::this_thread::sleep_for(100ms);
    } while (since(t0) < within);
    return r;
  }
};

TEST_P(NatsTest, ClusterStartsWithItsBucketAndAStreamLeader) {
  Millis took = start_server();
  std::cout << "[ nats ] " << GetParam() << ": 3 nodes and the bucket ready in " << took.count() << " ms\n";
  EXPECT_EQ(server_->nodes(), (std::vector<std::string>{"n1", "n2", "n3"}));
  for (const std::string n : {"n1", "n2", "n3"}) {
    EXPECT_TRUE(std::filesystem::exists(nodes_dir() / n / "nats.conf")) << n;
    EXPECT_TRUE(std::filesystem::exists(nodes_dir() / n / "store" / "jetstream")) << n;
  }
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);
  EXPECT_TRUE(*leader == "n1" || *leader == "n2" || *leader == "n3") << *leader;
}

TEST_P(NatsTest, GrantRefuseReleaseAndTheNextGrantHasAHigherRevision) {
  start_server();
  auto a = client("c1"), b = client("c2");
  LockResult first = from("c1", [&] { return a->acquire("l0", 1000ms); });
  ASSERT_EQ(first.outcome, Outcome::kOk) << first.error;
  ASSERT_TRUE(first.grant->token);
  ASSERT_TRUE(first.grant->promise && first.grant->promise->valid_ms);
  EXPECT_EQ(*first.grant->promise->valid_ms, 2000) << "the bucket's max age";
  LockResult refused = from("c2", [&] { return b->acquire("l0", 1000ms); });
  EXPECT_EQ(refused.outcome, Outcome::kFail);
  EXPECT_NE(refused.error.find("held"), std::string::npos) << refused.error;
  ASSERT_EQ(from("c1", [&] { return a->release(*first.grant); }).outcome, Outcome::kOk);
  // The key now holds the release's delete marker: the grant goes over it.
  LockResult second = from("c2", [&] { return b->acquire("l0", 1000ms); });
  ASSERT_EQ(second.outcome, Outcome::kOk) << second.error;
  EXPECT_GT(*second.grant->token, *first.grant->token + 1) << "the marker took a revision in between";
  LockResult stale = from("c1", [&] { return a->release(*first.grant); });
  EXPECT_EQ(stale.outcome, Outcome::kFail);
  EXPECT_NE(stale.error.find("not held"), std::string::npos) << stale.error;
  EXPECT_EQ(from("c2", [&] { return b->release(*second.grant); }).outcome, Outcome::kOk) << "the stale one took nothing";
}

TEST_P(NatsTest, AKeyIsGoneOnceTheMaxAgeRunsOut) {
  start_server({"servers=1", "max_age_ms=600"});
  auto a = client("c1"), b = client("c2");
  auto t0 = std::chrono::steady_clock::now();
  LockResult held = from("c1", [&] { return a->acquire("l0", 1000ms); });
  ASSERT_EQ(held.outcome, Outcome::kOk) << held.error;
  EXPECT_EQ(from("c2", [&] { return b->acquire("l0", 1000ms); }).outcome, Outcome::kFail);
  LockResult next = acquire_until_granted(*b, "c2", "l0", 5000ms);
  ASSERT_EQ(next.outcome, Outcome::kOk) << next.error;
  Millis gone = since(t0);
  std::cout << "[ nats ] " << GetParam() << ": a 600 ms key taken again after " << gone.count() << " ms\n";
  EXPECT_GE(gone.count(), 600) << "expired before its max age";
  EXPECT_EQ(from("c1", [&] { return a->release(*held.grant); }).outcome, Outcome::kFail) << "expired: not held";
}

TEST_P(NatsTest, AKilledNodeRestartsOnItsStoreAndTheOthersServeMeanwhile) {
  start_server();
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);
  Process* victim = server_->processes(*leader).at(0);
  server_->kill(*leader, test_deadline());
  EXPECT_FALSE(victim->alive());
  EXPECT_TRUE(victim->exit_expected());
  auto a = client("c1");
  LockResult r = acquire_until_granted(*a, "c1", "l0", 20000ms);
  EXPECT_EQ(r.outcome, Outcome::kOk) << "two of three serve: " << r.error;
  server_->start(*leader);
  EXPECT_TRUE(server_->running(*leader));
  std::string log = read_text(server_->log_files(*leader).at(0));
  EXPECT_NE(log.find("Restored"), std::string::npos) << "not restored from its store:\n" << log;
}

TEST_P(NatsTest, EveryNodeKilledAtOnceComesBackAndRevisionsGoOnGrowing) {
  start_server();
  auto a = client("c1");
  std::int64_t highest = 0;
  for (int i = 0; i < 5; ++i) {
    LockResult r = from("c1", [&] { return a->acquire("l" + std::to_string(i), 1000ms); });
    ASSERT_EQ(r.outcome, Outcome::kOk) << r.error;
    highest = std::max(highest, *r.grant->token);
  }
  std::vector<std::thread> kills;
  for (const std::string n : {"n1", "n2", "n3"}) kills.emplace_back([&, n] { server_->kill(n, test_deadline()); });
  for (auto& t : kills) t.join();
  for (const std::string n : {"n1", "n2", "n3"}) EXPECT_FALSE(server_->running(n)) << n;
  auto t0 = std::chrono::steady_clock::now();
  for (const std::string n : {"n1", "n2", "n3"}) server_->start(n);
  LockResult r = acquire_until_granted(*a, "c1", "l9", 30000ms);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error;
  std::cout << "[ nats ] " << GetParam() << ": after a kill of all three, a grant " << since(t0).count()
            << " ms after the restart, revision " << *r.grant->token << " (highest before: " << highest << ")\n";
  EXPECT_GT(*r.grant->token, highest) << "a revision went backwards after a process crash of every server";
}

// crash_loses=unsynced: each node's store is a fclazydisk mount, a kill takes the disk down
// with the server (its mount detached), a start mounts it again over the same backing
// directory, and teardown leaves no mount behind.
TEST_P(NatsTest, WithCrashLosesUnsyncedAKillTakesTheNodesDiskDownAndAStartMountsItAgain) {
  if (::geteuid() != 0) GTEST_SKIP() << "fclazydisk mounts need root";
  ::setenv("FENCECHECK_LAZYDISK", FC_LAZYDISK, 1);
  start_server({"crash_loses=unsynced", "writeback_ms=1000"});
  auto mounted = [&](const std::string& node) {
    return read_text("/proc/self/mountinfo").find((nodes_dir() / node / "store").string() + " ") != std::string::npos;
  };
  for (const std::string n : {"n1", "n2", "n3"}) EXPECT_TRUE(mounted(n)) << n;
  auto a = client("c1");
  ASSERT_EQ(from("c1", [&] { return a->acquire("l0", 1000ms); }).outcome, Outcome::kOk);
  server_->kill("n1", test_deadline());
  EXPECT_FALSE(mounted("n1")) << "the disk died with the node";
  EXPECT_TRUE(std::filesystem::exists(nodes_dir() / "n1" / "disk" / "jetstream")) << "what was written back stays";
  server_->start("n1");
  EXPECT_TRUE(mounted("n1"));
  EXPECT_EQ(acquire_until_granted(*a, "c1", "l1", 20000ms).outcome, Outcome::kOk);
  server_->teardown(test_deadline());
  server_.reset();
  for (const std::string n : {"n1", "n2", "n3"}) EXPECT_FALSE(mounted(n)) << n << ": teardown unmounts";
}

INSTANTIATE_TEST_SUITE_P(Runtimes, NatsTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
