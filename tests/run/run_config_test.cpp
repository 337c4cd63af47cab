// RunConfig: the defaults resolve() fills in and every bad option problem() refuses (the
// repro command line and config.json: run_config_repro_test.cpp).
#include "harness/run/run_config.h"

#include <algorithm>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "backends/registry.h"
#include "platform/os_util.h"
#include "nemesis/fault_registry.h"
#include "workloads/workload.h"
#include "tests/run/temp_dir.h"

namespace fencecheck::testing {
namespace {

// A runnable config on any machine with redis-server: the local runtime needs no root.
RunConfig local_config() {
  RunConfig c;
  c.runtime = "local";
  c.resolve();
  return c;
}

TEST(RunConfigResolve, NoneMeansNoFaults) {
  RunConfig c;
  c.nemesis = {"none"};
  c.resolve();
  EXPECT_TRUE(c.nemesis.empty());
  EXPECT_EQ(c.name, "redis-lock-append-none-unfenced");
}

TEST(RunConfigResolve, OpTimeoutOutlastsAPause) {
  RunConfig short_pause;
  short_pause.opts.set("pause-ms", 1000);
  short_pause.resolve();
  EXPECT_EQ(short_pause.opts.integer("op-timeout-ms"), 5000);
  RunConfig long_pause;
  long_pause.opts.set("pause-ms", 4500);
  long_pause.resolve();
  EXPECT_EQ(long_pause.opts.integer("op-timeout-ms"), 6500);
  RunConfig explicit_timeout;
  explicit_timeout.opts.set("op-timeout-ms", 1234);
  explicit_timeout.resolve();
  EXPECT_EQ(explicit_timeout.opts.integer("op-timeout-ms"), 1234);
}

TEST(RunConfigResolve, NameIsDerivedUnlessGiven) {
  RunConfig c;
  c.resolve();
  EXPECT_EQ(c.name, "redis-lock-append-pause-holder-unfenced");
  RunConfig two;
  two.workload = "lock";
  two.resource = "fenced";
  two.nemesis = {"pause-client", "pause-server"};
  two.resolve();
  EXPECT_EQ(two.name, "redis-lock-pause-client+pause-server-fenced");
  RunConfig named;
  named.name = "mine";
  named.resolve();
  EXPECT_EQ(named.name, "mine");
}

TEST(RunConfigResolve, SeedAndRuntimeAreFilled) {
  RunConfig a, b;
  a.resolve();
  b.resolve();
  ASSERT_TRUE(a.seed.has_value());
  EXPECT_NE(*a.seed, *b.seed) << "a drawn seed should differ between runs";
  EXPECT_EQ(a.runtime, ::geteuid() == 0 ? "netns" : "local");
  RunConfig fixed;
  fixed.seed = 99;
  fixed.runtime = "local";
  fixed.resolve();
  EXPECT_EQ(*fixed.seed, 99u);
  EXPECT_EQ(fixed.runtime, "local");
}

TEST(RunConfigProblem, DefaultConfigIsRunnable) {
  if (!os::find_executable("redis-server")) GTEST_SKIP() << "redis-server is not installed";
  RunConfig c;  // as root this is the netns runtime
  c.resolve();
  EXPECT_EQ(c.problem(), std::nullopt);
  EXPECT_EQ(local_config().problem(), std::nullopt);
}

TEST(RunConfigProblem, NetnsNeedsRoot) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root";
  RunConfig c = local_config();
  c.runtime = "netns";
  ASSERT_TRUE(c.problem());
  EXPECT_NE(c.problem()->find("--runtime local"), std::string::npos) << *c.problem();
}

// A rule between options binds only a run whose faults read them: with no pause fault, a
// pause as long as the test is irrelevant.
TEST(RunConfigProblem, APauseLongerThanTheTestMattersOnlyToAFaultThatPauses) {
  RunConfig c = local_config();
  c.opts.set("pause-ms", 60000);
  c.opts.set("time-limit", 10);
  c.nemesis = {"kill-server"};
  EXPECT_FALSE(c.problem().has_value()) << *c.problem();
  c.nemesis = {"kill-server", "pause-client"};
  ASSERT_TRUE(c.problem().has_value());
  EXPECT_NE(c.problem()->find("--pause-ms (60000 ms) must be shorter than --time-limit"), std::string::npos);
}

struct BadOption {
  const char* what;
  std::function<void(RunConfig&)> change;
  std::string expected;  // part of the message
};

TEST(RunConfigProblem, EveryBadOptionIsNamed) {
  const std::vector<BadOption> cases = {
      {"backend", [](RunConfig& c) { c.backend = "bogus"; },
       "unknown backend \"bogus\"; valid backends: " + backend_names()},
      {"workload", [](RunConfig& c) { c.workload = "bogus"; },
       "unknown workload \"bogus\"; valid workloads: " + workload_names()},
      {"fault", [](RunConfig& c) { c.nemesis = {"pause-holder", "bogus"}; },
       "unknown fault \"bogus\"; valid faults: " + fault_names()},
      {"none among faults", [](RunConfig& c) { c.nemesis = {"none", "pause-holder"}; }, "unknown fault \"none\""},
      {"resource", [](RunConfig& c) { c.resource = "half"; }, "--resource must be fenced or unfenced, not \"half\""},
      {"runtime", [](RunConfig& c) { c.runtime = "kubernetes"; },
       "--runtime must be one of docker, local, netns, ssh, external, not \"kubernetes\""},
      {"freeze off docker", [](RunConfig& c) { c.runtime = "local"; c.nemesis = {"freeze-server"}; },
       "fault \"freeze-server\" needs a runtime that freezes a whole node (every process at once, by the cgroup "
       "freezer), which --runtime local cannot: use --runtime docker"},
      {"partition off netns", [](RunConfig& c) { c.runtime = "local"; c.nemesis = {"partition-one"}; },
       "fault \"partition-one\" needs a runtime that cuts the network between nodes, which --runtime local cannot "
       "(every node is 127.0.0.1): use --runtime docker, netns or ssh"},
      {"leader of redis", [](RunConfig& c) { c.runtime = "netns"; c.nemesis = {"partition-leader"}; },
       "fault \"partition-leader\" needs a backend that names a leader, which --backend redis cannot: use "
       "--backend etcd, nats or zookeeper"},
      {"etcd's clocks", [](RunConfig& c) { c.backend = "etcd"; c.nemesis = {"clock-bump"}; },
       "fault \"clock-bump\" needs a backend that lets the clock library reach its servers' wall clocks, which "
       "--backend etcd cannot (etcd is a static Go binary"},
      {"concurrency 0", [](RunConfig& c) { c.opts.set("concurrency", 0); },
       "--concurrency must be between 1 and 64 (got 0)"},
      {"concurrency 65", [](RunConfig& c) { c.opts.set("concurrency", 65); }, "--concurrency"},
      {"keys 0", [](RunConfig& c) { c.opts.set("keys", 0); }, "--keys must be between 1 and 1000"},
      {"ttl 0", [](RunConfig& c) { c.opts.set("ttl-ms", 0); }, "--ttl-ms must be positive"},
      {"ttl -5", [](RunConfig& c) { c.opts.set("ttl-ms", -5); }, "--ttl-ms must be positive (got -5 ms)"},
      {"hold", [](RunConfig& c) { c.opts.set("hold-ms", -1); }, "--hold-ms must not be negative"},
      {"time limit", [](RunConfig& c) { c.opts.set("time-limit", 0); }, "--time-limit must be positive (got 0 s)"},
      {"pause 0", [](RunConfig& c) { c.opts.set("pause-ms", 0); }, "--pause-ms must be positive"},
      {"pause > limit", [](RunConfig& c) { c.opts.set("pause-ms", 60000), c.opts.set("time-limit", 10); },
       "--pause-ms (60000 ms) must be shorter than --time-limit"},
      {"pause = limit", [](RunConfig& c) { c.opts.set("pause-ms", 10000), c.opts.set("time-limit", 10); },
       "--pause-ms"},
      {"clock min > max", [](RunConfig& c) { c.opts.set("clock-min-ms", 501), c.opts.set("clock-max-ms", 500); },
       "--clock-min-ms must be between 0 and --clock-max-ms (500)"},
      {"clock max 0", [](RunConfig& c) { c.opts.set("clock-max-ms", 0); }, "--clock-max-ms must be positive"},
      {"restart -1", [](RunConfig& c) { c.opts.set("restart-ms", -1); }, "--restart-ms must not be negative"},
      {"targets", [](RunConfig& c) { c.opts.set("nemesis-targets", "most"); },
       "--nemesis-targets must be one of random, one, minority, majority, all, clients, not \"most\""},
      {"targets clients", [](RunConfig& c) { c.nemesis = {"kill-server"}; c.opts.set("nemesis-targets", "clients"); },
       "--nemesis-targets clients applies to clock-bump and clock-strobe only, not to kill-server"},
      {"client backend", [](RunConfig& c) { c.opts.set("client", "curator"); },
       "--client curator (curator-recipes 5.4.0) locks on backend zookeeper, not redis: use --backend zookeeper"},
      {"client unknown", [](RunConfig& c) { c.opts.set("client", "jedis"); }, "--client must be one of native, "},
      {"client docker", [](RunConfig& c) { c.opts.set("client", "redis-py"); c.runtime = "docker"; },
       "--client redis-py needs a runtime that has the lock libraries' interpreters (Node, Java, Python) and "
       "adapter files on its nodes, which --runtime docker cannot"},
      {"kill-session on redis", [](RunConfig& c) { c.nemesis = {"kill-session"}; },
       "fault \"kill-session\" needs a backend that ends a client's sessions on its servers (its session-bound "
       "locks with them), which --backend redis cannot (a lock is a key with an expiry, not bound to a "
       "connection): use --backend mariadb or postgres"},
      {"pause inside native", [](RunConfig& c) { c.nemesis = {"pause-after-send"}; },
       "fault \"pause-after-send\" needs a client that pauses inside its lock library right after it sent the "
       "lock commands, which --client native cannot: use --client node-redlock or node-redlock-5"},
      {"model", [](RunConfig& c) { c.opts.set("model", "semaphore"); }, "--model must be one of mutex, fenced-mutex"},
      {"linear time", [](RunConfig& c) { c.opts.set("linear-time-limit", 0); },
       "--linear-time-limit must be positive (got 0 s)"},
      {"linear memory", [](RunConfig& c) { c.opts.set("linear-memory-limit", 0); },
       "--linear-memory-limit must be positive (got 0 bytes)"},
      {"interval 0", [](RunConfig& c) { c.opts.set("nemesis-interval", 0); }, "--nemesis-interval must be positive"},
      {"interval -1", [](RunConfig& c) { c.opts.set("nemesis-interval", -1); }, "--nemesis-interval must be positive"},
      {"op timeout", [](RunConfig& c) { c.opts.set("op-timeout-ms", -1); }, "--op-timeout-ms must be positive"},
      {"name /", [](RunConfig& c) { c.name = "a/b"; }, "--name must not contain '/'"},
      {"name ..", [](RunConfig& c) { c.name = ".."; }, "--name"},
      {"backend option", [](RunConfig& c) { c.backend_opts = {"persistence=maybe"}; },
       "--backend-opt: backend redis: option \"persistence\" cannot be \"maybe\""},
      {"backend option key", [](RunConfig& c) { c.backend_opts = {"bogus=1"}; },
       "--backend-opt: backend redis: unknown option \"bogus\""},
      {"client option of native", [](RunConfig& c) { c.client_opts = {"lost_on=lost"}; },
       "--client-opt: client native: unknown option \"lost_on\" (it has none)"},
      {"client option value",
       [](RunConfig& c) {
         c.backend = "zookeeper";
         c.opts.set("client", "kazoo");
         c.client_opts = {"lost_on=never"};
       },
       "--client-opt: client kazoo: option \"lost_on\" cannot be \"never\" (allowed: suspended, lost)"},
      {"client option key",
       [](RunConfig& c) {
         c.backend = "etcd";
         c.opts.set("client", "tooz");
         c.client_opts = {"etcd=v3"};
       },
       "--client-opt: client tooz: unknown option \"etcd\" (known: etcd_api, etcd3gw_shim)"},
      {"max info", [](RunConfig& c) { c.opts.set("max-info", 0); }, "--max-info must be positive (got 0)"},
      {"stall", [](RunConfig& c) { c.opts.set("stall-ms", -1); }, "--stall-ms must be positive"},
      {"external without endpoints", [](RunConfig& c) { c.runtime = "external"; },
       "--runtime external needs --endpoints redis=HOST:PORT[,HOST:PORT...]"},
      {"endpoints of another backend",
       [](RunConfig& c) {
         c.runtime = "external";
         c.opts.set("endpoints", "etcd=127.0.0.1:2379");
       },
       "--endpoints names backend \"etcd\", but the run tests --backend redis"},
      {"two redis endpoints",
       [](RunConfig& c) {
         c.runtime = "external";
         c.opts.set("endpoints", "redis=127.0.0.1:6379,127.0.0.1:6380");
       },
       "--endpoints: backend redis takes one server, not 2"},
      {"malformed endpoints",
       [](RunConfig& c) {
         c.runtime = "external";
         c.opts.set("endpoints", "redis=db.example:6379");
       },
       "--endpoints: \"db.example:6379\" is not IPV4-ADDRESS:PORT"},
      {"server fault under external",
       [](RunConfig& c) {
         c.runtime = "external";
         c.opts.set("endpoints", "redis=127.0.0.1:6379");
         c.nemesis = {"pause-holder", "kill-server"};
       },
       "fault \"kill-server\" needs a runtime that runs the backend's servers, which --runtime external cannot (you "
       "run them; it drives the clients only): use --runtime docker, local, netns or ssh; available here: "
       "pause-holder, pause-acquirer, pause-after-send, pause-client, partition-holder, kill-client; with "
       "--nemesis-targets clients: clock-bump, clock-strobe"},
      {"endpoints under netns", [](RunConfig& c) { c.opts.set("endpoints", "redis=127.0.0.1:6379"); },
       "--endpoints is read by --runtime external only"},
  };
  for (const auto& bad : cases) {
    RunConfig c = local_config();
    bad.change(c);
    auto problem = c.problem();
    ASSERT_TRUE(problem.has_value()) << bad.what << " was accepted";
    EXPECT_NE(problem->find(bad.expected), std::string::npos) << bad.what << ": " << *problem;
  }
}

// The backend that can end its clients' sessions takes kill-session (what the machine has
// installed aside: input_problem).
TEST(RunConfigProblem, KillSessionIsAcceptedOnPostgres) {
  RunConfig c;
  c.runtime = "local";
  c.backend = "postgres";
  c.backend_opts = {"lock=advisory"};
  c.nemesis = {"kill-session"};
  c.resolve();
  EXPECT_EQ(c.input_problem(), std::nullopt);
  c.backend = "zookeeper";
  c.backend_opts = {};
  c.resolve();
  ASSERT_TRUE(c.input_problem().has_value());
  EXPECT_NE(c.input_problem()->find("--backend zookeeper cannot"), std::string::npos) << *c.input_problem();
}

TEST(RunConfigProblem, NonFiniteTimeLimitIsRefused) {
  // CLI11 accepts `--time-limit nan` and `inf`; both comparisons in problem() are false
  // for NaN, and the runner would turn them into a deadline that never comes.
  for (double bad : {std::nan(""), HUGE_VAL}) {
    RunConfig c = local_config();
    c.opts.set("time-limit", bad);
    ASSERT_TRUE(c.problem()) << "--time-limit " << bad << " is accepted";
    EXPECT_NE(c.problem()->find("--time-limit"), std::string::npos) << *c.problem();
  }
}

}  // namespace
}  // namespace fencecheck::testing
