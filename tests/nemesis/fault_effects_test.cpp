// Each fault family's effect, seen from outside with real processes (label `integration`):
// a clock offset moves redis-server's TIME and expires its leases; a kill-server crash
// loses or keeps a lock per persistence and the server answers again after the restart; a
// partition through the nemesis stops TCP across the cut and heal restores it. Under the
// netns runtime as root (partitions need it), else local (partition test skipped). The
// capabilities are the runner's own (harness/run/fault_capabilities.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <thread>

#include "backends/redis/redis_connection.h"
#include "backends/registry.h"
#include "harness/run/fault_capabilities.h"
#include "nemesis/clock/node_clocks.h"
#include "nemesis/clock_nemesis.h"
#include "nemesis/crash_nemesis.h"
#include "nemesis/fault_registry.h"
#include "nemesis/partition_nemesis.h"
#include "platform/errors.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/docker/docker_support.h"
#include "tests/nemesis/fake_env.h"
#include "tests/runtime/test_util.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

// On the runtime this machine runs by default, and on docker (redis in its container).
class FaultEffects : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "docker") {
      if (::geteuid() != 0) GTEST_SKIP() << "the docker runtime needs root";
      FC_REQUIRE_DOCKER();
    }
    runtime_ = make_runtime(GetParam(), state_.run_id(), state_);
    runtime_->share(tmp_.path(), true);
    runtime_->share(FC_CLOCK_LIB, false);
    runtime_->create({"n1", "c1"});
    clocks_ = std::make_unique<NodeClocks>(FC_CLOCK_LIB, tmp_.path() / "clock", std::vector<std::string>{"n1"});
    runtime_->set_spec_decorator([this](ProcessSpec& s) { clocks_->decorate(s); });
  }
  void TearDown() override {
    if (runtime_) runtime_->destroy();
  }

  std::unique_ptr<LockServer> start_redis(const std::string& persistence) {
    const BackendInfo& redis = *find_backend("redis");
    auto server = redis.make_server(resolve_backend_options(redis, {"persistence=" + persistence}));
    server->setup(*runtime_, tmp_.path() / ("nodes-" + persistence));
    return server;
  }
  // A command to redis on n1, sent from inside c1's network.
  RedisCommandResult redis(const LockServer& server, const std::vector<std::string>& args) {
    nlohmann::json cfg = server.client_config();
    RedisCommandResult r;
    runtime_->run_in("c1", [&] {
      RedisConnection conn(cfg["host"], cfg["port"], 500ms, 500ms);
      r = conn.command(args);
    });
    return r;
  }
  long long redis_time_s(const LockServer& server) {
    auto r = redis(server, {"TIME"});
    return std::stoll(std::string(r.reply->element[0]->str, r.reply->element[0]->len));
  }
  long long pttl(const LockServer& server, const std::string& key) { return redis(server, {"PTTL", key}).reply->integer; }

  TempDir tmp_;
  RunState state_{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<NodeClocks> clocks_;
};

INSTANTIATE_TEST_SUITE_P(Runtimes, FaultEffects, ::testing::Values(default_runtime_kind(), "docker"));

// A server the library never reached (here: started without it) cannot have its clock
// shifted; saying so beats a clock fault that silently changes nothing.
TEST_P(FaultEffects, AClockShiftThatCannotReachTheServerIsAHarnessError) {
  runtime_->set_spec_decorator([this](ProcessSpec& s) {
    clocks_->decorate(s);
    s.env["FENCECHECK_CLOCK_FILE"] = (tmp_.path() / "no-such-dir" / "n1.clock").string();
  });
  auto server = start_redis("none");
  ServerClocks server_clocks(*clocks_, *server, *runtime_);
  try {
    server_clocks.set_offset("n1", 5000ms, test_deadline());
    ADD_FAILURE() << "the shift was taken although redis cannot see it";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot shift the clock of n1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server_clocks.offset("n1"), 0ms);
  server_clocks.set_offset("n1", 0ms, test_deadline());  // a reset is always fine
}

TEST_P(FaultEffects, AClockBumpMovesRedisTimeAndExpiresItsLease) {
  auto server = start_redis("none");
  long long before = redis_time_s(*server);
  ASSERT_EQ(redis(*server, {"SET", "lk", "v1", "NX", "PX", "10000"}).reply->type, REDIS_REPLY_STATUS);
  FakeNemesisEnv env({"c1"}, {"n1"});
  ServerProcesses role(*server, *runtime_);
  ServerClocks server_clocks(*clocks_, *server, *runtime_);  // the runner's: checks the shift reaches redis
  NemesisContext ctx{env.ctx.net, role, env.ctx.clients, server_clocks, env.ctx.log, env.time, env.events};
  ClockNemesis clock(ctx, default_fault_options());
  clock.replay("clock-bump", {{"fault", "clock-bump"}, {"deltas", {{"n1", 15000}}}});
  EXPECT_NEAR(redis_time_s(*server) - before, 15, 1) << "TIME shows the +15 s offset";
  EXPECT_EQ(pttl(*server, "lk"), -2) << "a 10 s lease is gone at once";
  ASSERT_EQ(redis(*server, {"SET", "lk", "v2", "NX", "PX", "10000"}).reply->type, REDIS_REPLY_STATUS);
  clock.heal();  // back to 0: a backward jump lengthens the new lease
  EXPECT_NEAR(redis_time_s(*server) - before, 0, 1);
  EXPECT_GT(pttl(*server, "lk"), 20000);
  EXPECT_EQ(env.records().back().f, "clock-reset");
}

TEST_P(FaultEffects, KillServerLosesTheLockOnlyWithoutPersistenceAndRestarts) {
  for (const std::string persistence : {"none", "always"}) {
    SCOPED_TRACE(persistence);
    auto server = start_redis(persistence);
    ASSERT_EQ(redis(*server, {"SET", "lk", "v", "NX", "PX", "60000"}).reply->type, REDIS_REPLY_STATUS);
    FakeNemesisEnv env({"c1"}, {"n1"});
    ServerProcesses role(*server, *runtime_);
    NemesisContext ctx{env.ctx.net, role, env.ctx.clients, env.ctx.clocks, env.ctx.log, env.time, env.events};
    CrashNemesis crash(ctx, fault_options({{"pause-ms", 1000}, {"restart-ms", 300}, {"clock-max-ms", 1000}}));
    crash.replay("kill", {{"fault", "kill-server"}, {"targets", {"n1"}}, {"restart_ms", 300}});
    EXPECT_FALSE(server->running("n1"));
    EXPECT_EQ(redis(*server, {"PING"}).status, RedisCommandResult::Status::kNotSent) << "gone";
    env.time.advance(300ms);
    crash.tick();
    EXPECT_TRUE(server->running("n1"));
    auto r = redis(*server, {"GET", "lk"});
    ASSERT_EQ(r.status, RedisCommandResult::Status::kReply);
    EXPECT_EQ(r.reply->type, persistence == "none" ? REDIS_REPLY_NIL : REDIS_REPLY_STRING);
    server->teardown(test_deadline());
  }
}

TEST_P(FaultEffects, APartitionStopsTcpAcrossTheCutAndHealRestoresIt) {
  if (!runtime_offers(*runtime_, Capability::kCutsNetwork)) GTEST_SKIP() << "partitions need the netns runtime (root)";
  auto server = start_redis("none");
  RuntimeNet net(*runtime_);
  FakeNemesisEnv env({"c1"}, {"n1"});
  ServerProcesses role(*server, *runtime_);
  NemesisContext ctx{net, role, env.ctx.clients, env.ctx.clocks, env.ctx.log, env.time, env.events};
  PartitionNemesis partition(ctx, default_fault_options());
  std::mt19937_64 rng(1);
  const Node& n1 = runtime_->node("n1");
  std::uint16_t port = server->client_config()["port"];
  EXPECT_TRUE(runtime_->tcp_connects("c1", n1.address, port, 1000ms));
  partition.start("partition-halves", rng);  // two nodes: one on each side
  EXPECT_FALSE(runtime_->tcp_connects("c1", n1.address, port, 300ms));
  EXPECT_EQ(env.records().back().value["grudge"], nlohmann::json({{"c1", {"n1"}}, {"n1", {"c1"}}}));
  partition.heal();
  EXPECT_TRUE(runtime_->tcp_connects("c1", n1.address, port, 1000ms));
  EXPECT_EQ(env.records().back().f, "heal");
}

}  // namespace
}  // namespace fencecheck::testing
