// RedisServer started for real under the local runtime and the Supervisor.
#include "backends/redis/redis_server.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "backends/registry.h"
#include "platform/run_state.h"
#include "platform/supervisor.h"
#include "tests/backends/test_process.h"

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
    supervisor_.stop_all();
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
  Supervisor supervisor_{*runtime_, state_};
};

TEST_P(RedisServerTest, StartsServesLocksPausesAndStops) {
  const BackendInfo* backend = find_backend("redis");
  ASSERT_NE(backend, nullptr);
  std::unique_ptr<LockServer> server = backend->make_server(nullptr);
  EXPECT_TRUE(server->processes().empty());
  server->start(*runtime_, supervisor_, dir_ / "nodes");

  EXPECT_TRUE(std::filesystem::exists(dir_ / "nodes/n1/redis.conf"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "nodes/n1/redis-server.log"));
  nlohmann::json cfg = server->client_config();
  EXPECT_EQ(cfg["host"], runtime_->node("n1").address);
  EXPECT_EQ(cfg["port"], runtime_->port("n1", "redis", 6379));

  cfg["command_timeout_ms"] = 300;
  std::unique_ptr<LockClient> client = backend->make_client(cfg, "c1");
  LockResult g = from_c1([&] { return client->acquire("k", 5s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  EXPECT_EQ(g.grant->token, 1);

  ASSERT_EQ(server->processes().size(), 1u);
  Process* redis = server->processes()[0];
  testing::pause_group(redis->pid());
  LockResult paused = from_c1([&] { return client->acquire("k2", 5s); });
  redis->signal(SIGCONT);
  EXPECT_EQ(paused.outcome, Outcome::kUnknown) << paused.error;

  server->stop();
  EXPECT_FALSE(redis->alive());
  EXPECT_EQ(from_c1([&] { return client->acquire("k3", 5s); }).outcome, Outcome::kFail);
  server->stop();  // idempotent
}

TEST_P(RedisServerTest, UnwritableNodesDirIsAHarnessError) {
  std::ofstream(dir_ / "not-a-dir") << "x";
  RedisServer server(RedisServerOptions{});
  EXPECT_THROW(server.start(*runtime_, supervisor_, dir_ / "not-a-dir"), HarnessError);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RedisServerTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck
