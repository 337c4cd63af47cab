// ZooKeeperServer started for real under each runtime: the LockServer role end to end —
// a 3-node ensemble with a leader, the recipe lock served by it, a crash of the leader
// and of the whole ensemble.
#include "backends/zookeeper/zookeeper_server.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/test_util.h"
#include "tests/backends/zookeeper/zk_fixture.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::epoch_of;
using testing::eventually;

using ZooKeeperServerTest = testing::ZooKeeperEnsembleTest;

TEST_P(ZooKeeperServerTest, EnsembleHasALeaderAndServesTheLock) {
  start_ensemble();
  EXPECT_EQ(server_->nodes(), (std::vector<std::string>{"n1", "n2", "n3"}));
  std::string hosts = server_->client_config()["hosts"];
  for (const std::string n : {"n1", "n2", "n3"}) {
    EXPECT_TRUE(server_->running(n));
    EXPECT_TRUE(std::filesystem::exists(dir_ / "nodes" / n / "zoo.cfg"));
    EXPECT_TRUE(std::filesystem::exists(dir_ / "nodes" / n / "data" / "myid"));
    EXPECT_TRUE(std::filesystem::exists(server_->log_files(n).at(0)));
    std::string endpoint =
        runtime_->node(n).address + ":" + std::to_string(runtime_->port(n, "zk-client", 2181));
    EXPECT_NE(hosts.find(endpoint), std::string::npos) << hosts;
  }
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);
  EXPECT_TRUE(*leader == "n1" || *leader == "n2" || *leader == "n3");

  ZooKeeperLockClient& a = client("c1");
  ZooKeeperLockClient& impatient = client("c2", {{"max_wait_ms", 300}});
  LockResult ga = on("c1", [&] { return a.acquire("k", 5s); });
  ASSERT_EQ(ga.outcome, Outcome::kOk) << ga.error;
  ASSERT_TRUE(ga.grant && ga.grant->token);
  EXPECT_EQ(ga.grant->key, "k");

  LockResult gi = on("c2", [&] { return impatient.acquire("k", 5s); });
  EXPECT_EQ(gi.outcome, Outcome::kFail);
  EXPECT_EQ(gi.error.rfind("lock held by another client", 0), 0u) << gi.error;
  // It deleted its node when it gave up: only a's is left in the queue.
  ZkSession::Reply queue = impatient.session().children(ZooKeeperLockClient::lock_dir("k"), Clock::now() + 2s);
  ASSERT_TRUE(queue.answered_ok());
  EXPECT_EQ(queue.children.size(), 1u);

  // Only the holder releases, and only once.
  EXPECT_EQ(on("c2", [&] { return impatient.release(*ga.grant); }).error, "not held");

  // A second client waits in the queue until the holder releases.
  ZooKeeperLockClient& b = client("c2");
  LockResult gb;
  std::atomic<std::int64_t> granted_at{0};
  std::thread waiter([&] {
    gb = on("c2", [&] { return b.acquire("k", 5s); });
    granted_at = Clock::now().time_since_epoch().count();
  });
  std::this_thread::sleep_for(500ms);
  std::int64_t released_at = Clock::now().time_since_epoch().count();
  LockResult ra = on("c1", [&] { return a.release(*ga.grant); });
  waiter.join();
  EXPECT_EQ(ra.outcome, Outcome::kOk) << ra.error;
  ASSERT_EQ(gb.outcome, Outcome::kOk) << gb.error;
  EXPECT_GE(granted_at.load(), released_at) << "the waiter got the lock before the release";
  EXPECT_GT(*gb.grant->token, *ga.grant->token);
  EXPECT_EQ(on("c1", [&] { return a.release(*ga.grant); }).outcome, Outcome::kFail) << "released twice";
  EXPECT_EQ(on("c2", [&] { return b.release(*gb.grant); }).outcome, Outcome::kOk);
}

// kill -9 of the leader: the survivors elect another, and tokens keep growing across the
// change because czxids carry the new epoch in their high 32 bits.
TEST_P(ZooKeeperServerTest, LeaderCrashReelectsAndTokensKeepIncreasing) {
  start_ensemble();
  ZooKeeperLockClient& a = client("c1");
  LockResult g1 = on("c1", [&] { return a.acquire("k", 5s); });
  ASSERT_EQ(g1.outcome, Outcome::kOk) << g1.error;
  ASSERT_EQ(on("c1", [&] { return a.release(*g1.grant); }).outcome, Outcome::kOk);

  std::optional<std::string> old_leader = server_->leader();
  ASSERT_TRUE(old_leader);
  Process* victim = server_->processes(*old_leader).at(0);
  auto killed = Clock::now();
  server_->kill(*old_leader, test_deadline());
  EXPECT_FALSE(victim->alive());
  EXPECT_TRUE(victim->exit_expected());
  EXPECT_FALSE(server_->running(*old_leader));
  std::optional<std::string> new_leader;
  ASSERT_TRUE(eventually([&] { return (new_leader = server_->leader()) && *new_leader != *old_leader; }, 20s));
  std::cout << "[ zookeeper ] " << GetParam() << ": new leader " << *new_leader << " after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed).count()
            << " ms\n";

  // The client reconnects to a survivor by itself; until then acquires may fail.
  LockResult g2;
  ASSERT_TRUE(eventually([&] { return (g2 = on("c1", [&] { return a.acquire("k", 5s); })).outcome == Outcome::kOk; }, 20s))
      << g2.error;
  EXPECT_GT(*g2.grant->token, *g1.grant->token);
  EXPECT_GT(epoch_of(*g2.grant->token), epoch_of(*g1.grant->token));
  EXPECT_EQ(on("c1", [&] { return a.release(*g2.grant); }).outcome, Outcome::kOk);

  server_->start(*old_leader);  // rejoins the quorum as a follower
  EXPECT_TRUE(server_->running(*old_leader));
  EXPECT_EQ(server_->leader(), new_leader);
}

// A member alone has no quorum and cannot answer: after all three crashed, the first
// start returns at once and the one that makes a majority waits for it to serve.
TEST_P(ZooKeeperServerTest, WholeEnsembleCrashAndRestart) {
  start_ensemble();
  ZooKeeperLockClient& a = client("c1", {{"connect_timeout_ms", 500}});
  LockResult g1 = on("c1", [&] { return a.acquire("k", 5s); });
  ASSERT_EQ(g1.outcome, Outcome::kOk) << g1.error;
  for (const std::string n : {"n1", "n2", "n3"}) server_->kill(n, test_deadline());
  EXPECT_FALSE(server_->leader());

  LockResult down;
  ASSERT_TRUE(eventually([&] { return (down = on("c1", [&] { return a.acquire("k2", 5s); })).not_sent; }, 10s))
      << down.error;
  EXPECT_EQ(down.outcome, Outcome::kFail);

  auto t0 = Clock::now();
  server_->start("n1");
  EXPECT_LT(Clock::now() - t0, 2s) << "a lone member cannot be ready; its start must not wait";
  server_->start("n2");
  EXPECT_TRUE(server_->leader()) << "the start that made a majority waited for it to serve";
  server_->start("n3");
  LockResult g2;
  ASSERT_TRUE(eventually([&] { return (g2 = on("c1", [&] { return a.acquire("k2", 5s); })).outcome == Outcome::kOk; }, 20s))
      << g2.error;
  EXPECT_GT(*g2.grant->token, *g1.grant->token);
}

TEST_P(ZooKeeperServerTest, PausedMemberIsSkippedWhenAskingForTheLeader) {
  start_ensemble();
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);
  std::string follower = *leader == "n1" ? "n2" : "n1";
  server_->pause(follower, test_deadline());
  EXPECT_TRUE(server_->processes(follower).at(0)->paused());
  auto t0 = Clock::now();
  EXPECT_EQ(server_->leader(), leader);
  EXPECT_LT(Clock::now() - t0, 400ms);
  server_->resume(follower, test_deadline());
  server_->stop(follower, test_deadline());
  EXPECT_FALSE(server_->running(follower));
  EXPECT_TRUE(server_->processes(follower).empty());
}

// FENCECHECK_CACHE for one test: a directory of the test's own, then unset again.
struct TestCache {
  explicit TestCache(const std::filesystem::path& dir) { ::setenv("FENCECHECK_CACHE", dir.c_str(), 1); }
  ~TestCache() { ::unsetenv("FENCECHECK_CACHE"); }
};

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) out.push_back(entry.path());
  return out;
}

bool maps_file(int pid, const std::filesystem::path& file) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(file.string()) != std::string::npos) return true;
  }
  return false;
}

// The first setup with an empty cache makes the class archive before it launches the
// servers, and every server maps it; the run that made it leaves nothing in the node's
// directory.
TEST_P(ZooKeeperServerTest, TheServersMapTheClassArchiveTheFirstSetupMade) {
  TestCache cache(dir_ / "cache");
  start_ensemble();
  std::vector<std::filesystem::path> kept = files_in(dir_ / "cache" / "zookeeper");
  ASSERT_EQ(kept.size(), 1u) << "one archive and no .failed";
  const std::filesystem::path archive = kept[0];
  EXPECT_EQ(archive.extension(), ".jsa") << archive;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "nodes" / "n1" / "class-archive"));
  for (const std::string n : {"n1", "n2", "n3"}) {
    EXPECT_TRUE(maps_file(server_->processes(n).at(0)->pid(), archive)) << n;
  }
  ZooKeeperLockClient& a = client("c1");
  LockResult g = on("c1", [&] { return a.acquire("k", 5s); });
  EXPECT_EQ(g.outcome, Outcome::kOk) << g.error;
}

// An archive damaged since it was made crashes the JVMs that map it: the error names it.
TEST_P(ZooKeeperServerTest, ADamagedClassArchiveIsNamedInTheError) {
  TestCache cache(dir_ / "cache");
  start_ensemble();
  server_->teardown(test_deadline());
  std::vector<std::filesystem::path> kept = files_in(dir_ / "cache" / "zookeeper");
  ASSERT_EQ(kept.size(), 1u);
  std::string head(4096, '\0');
  std::ifstream(kept[0], std::ios::binary).read(head.data(), static_cast<std::streamsize>(head.size()));
  std::filesystem::remove(kept[0]);
  std::ofstream(kept[0], std::ios::binary) << head;  // its header, and nothing behind it

  server_ = backend_->make_server(resolve_backend_options(*backend_, {}));
  try {
    server_->setup(*runtime_, dir_ / "nodes2");
    ADD_FAILURE() << "the servers started on a truncated archive";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find(kept[0].string()), std::string::npos) << e.what();
  }
}

TEST_P(ZooKeeperServerTest, UnwritableNodesDirIsAHarnessError) {
  std::ofstream(dir_ / "not-a-dir") << "x";
  ZooKeeperServer server(ZooKeeperServerOptions{});
  EXPECT_THROW(server.setup(*runtime_, dir_ / "not-a-dir"), HarnessError);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ZooKeeperServerTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck
