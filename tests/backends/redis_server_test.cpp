// RedisServer started for real under each runtime: the LockServer role end to end.
#include "backends/redis/redis_server.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "backends/registry.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

// Runs under each runtime kind: "local", and "netns" when root (redis then binds the
// node's private address and is probed from inside n1's namespace).
class RedisServerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "netns" && ::geteuid() != 0) GTEST_SKIP() << "netns needs root";
    dir_ = std::filesystem::temp_directory_path() /
           ("fc-redis-server-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    runtime_->create({"n1", "c1"});
  }
  void TearDown() override {
    runtime_->destroy();
    std::filesystem::remove_all(dir_);
  }
  // Runs a lock client call from client node c1, inside its namespace under netns.
  LockResult from_c1(const std::function<LockResult()>& call) {
    LockResult r;
    runtime_->run_in("c1", [&] { r = call(); });
    return r;
  }
  std::filesystem::path dir_;
  RunState state_{RunState::new_run_id()};
  // Without root the netns case is skipped in SetUp; it still needs some runtime here.
  std::unique_ptr<Runtime> runtime_ = make_runtime(
      GetParam() == "netns" && ::geteuid() != 0 ? "local" : GetParam(), state_.run_id(), state_);
};

TEST_P(RedisServerTest, StartsServesLocksPausesAndStops) {
  const BackendInfo* backend = find_backend("redis");
  ASSERT_NE(backend, nullptr);
  std::unique_ptr<LockServer> server = backend->make_server(resolve_backend_options(*backend, {}));
  EXPECT_EQ(server->nodes(), std::vector<std::string>{"n1"});
  EXPECT_FALSE(server->running("n1"));
  server->setup(*runtime_, dir_ / "nodes");

  EXPECT_TRUE(std::filesystem::exists(dir_ / "nodes/n1/redis.conf"));
  EXPECT_EQ(server->log_files("n1"), std::vector<std::filesystem::path>{dir_ / "nodes/n1/redis-server.log"});
  EXPECT_TRUE(std::filesystem::exists(server->log_files("n1")[0]));
  nlohmann::json cfg = server->client_config();
  EXPECT_EQ(cfg["host"], runtime_->node("n1").address);
  EXPECT_EQ(cfg["port"], runtime_->port("n1", "redis", 6379));

  cfg["command_timeout_ms"] = 300;
  std::unique_ptr<LockClient> client = backend->make_client(cfg, "c1");
  LockResult g = from_c1([&] { return client->acquire("k", 5s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  EXPECT_EQ(g.grant->token, 1);

  ASSERT_EQ(server->processes("n1").size(), 1u);
  Process* redis = server->processes("n1")[0];
  server->pause("n1", test_deadline());
  EXPECT_TRUE(redis->paused());
  LockResult paused = from_c1([&] { return client->acquire("k2", 5s); });
  server->resume("n1", test_deadline());
  EXPECT_EQ(paused.outcome, Outcome::kUnknown) << paused.error;

  server->stop("n1", test_deadline());
  EXPECT_FALSE(redis->alive());
  EXPECT_FALSE(server->running("n1"));
  EXPECT_EQ(from_c1([&] { return client->acquire("k3", 5s); }).outcome, Outcome::kFail);
  server->teardown(test_deadline());
  server->teardown(test_deadline());  // idempotent
}

// Kleppmann's K5 premise, measured: a crash-restart keeps the lock only with persistence.
// kill -9 with appendfsync everysec keeps it too (the page cache survives a process crash).
TEST_P(RedisServerTest, CrashRestartKeepsLocksOnlyWithPersistence) {
  const BackendInfo* backend = find_backend("redis");
  for (const std::string level : {"none", "everysec", "always"}) {
    SCOPED_TRACE(level);
    std::unique_ptr<LockServer> server =
        backend->make_server(resolve_backend_options(*backend, {"persistence=" + level}));
    server->setup(*runtime_, dir_ / ("nodes-" + level));
    std::unique_ptr<LockClient> a = backend->make_client(server->client_config(), "c1");
    std::unique_ptr<LockClient> b = backend->make_client(server->client_config(), "c2");
    ASSERT_EQ(from_c1([&] { return a->acquire("k", 60s); }).outcome, Outcome::kOk);
    if (level == "everysec") std::this_thread::sleep_for(1200ms);  // let the second's fsync pass
    Process* before = server->processes("n1")[0];
    server->kill("n1", test_deadline());
    EXPECT_FALSE(before->alive());
    EXPECT_TRUE(before->exit_expected()) << "a crash the nemesis asked for is not a bench failure";
    EXPECT_FALSE(server->running("n1"));
    server->start("n1");  // same data directory
    EXPECT_TRUE(server->running("n1"));
    LockResult second = from_c1([&] { return b->acquire("k", 60s); });
    EXPECT_EQ(second.outcome, level == "none" ? Outcome::kOk : Outcome::kFail) << second.error;
    server->teardown(test_deadline());
  }
}

TEST_P(RedisServerTest, UnwritableNodesDirIsAHarnessError) {
  std::ofstream(dir_ / "not-a-dir") << "x";
  RedisServer server(RedisServerOptions{});
  EXPECT_THROW(server.setup(*runtime_, dir_ / "not-a-dir"), HarnessError);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RedisServerTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck
