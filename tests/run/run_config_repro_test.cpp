// RunConfig's record of a run: the repro command line and config.json carry every
// resolved value (an adapter's options too) and read back the same; a plan's faults become
// the run's. The defaults and refusals are run_config_test.cpp's.
#include "harness/run/run_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/run/temp_dir.h"

namespace fencecheck::testing {
namespace {

// repro_args as option → value.
std::map<std::string, std::string> options_of(const std::vector<std::string>& args) {
  std::map<std::string, std::string> m;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    EXPECT_EQ(args[i].rfind("--", 0), 0u) << "expected an option at " << i << ": " << args[i];
    EXPECT_EQ(m.count(args[i]), 0u) << args[i] << " given twice";
    m[args[i]] = args[i + 1];
  }
  EXPECT_EQ(args.size() % 2, 0u);
  return m;
}

TEST(RunConfigRepro, CarriesEveryResolvedValue) {
  RunConfig c;
  c.workload = "lock";
  c.nemesis = {"pause-client", "pause-server"};
  c.resource = "fenced";
  c.runtime = "local";
  c.opts.set("concurrency", 7);
  c.opts.set("keys", 3);
  c.opts.set("hold-ms", 11);
  c.opts.set("ttl-ms", 222);
  c.opts.set("pause-ms", 333);
  c.opts.set("nemesis-interval", 444);
  c.opts.set("time-limit", 2.5);
  c.seed = 18446744073709551615ULL;
  c.store = "some/store";
  c.backend_opts = {"persistence=always"};
  c.opts.set("max-info", 17);
  c.resolve();
  auto o = options_of(c.repro_args());
  EXPECT_EQ(o["--backend"], "redis");
  EXPECT_EQ(o["--backend-opt"], "persistence=always");
  EXPECT_EQ(c.to_json()["backend_options"], nlohmann::json({{"persistence", "always"}}));
  EXPECT_EQ(o["--max-info"], "17");
  EXPECT_EQ(o["--stall-ms"], "10000");
  EXPECT_EQ(o["--workload"], "lock");
  EXPECT_EQ(o["--nemesis"], "pause-client,pause-server");
  EXPECT_EQ(o["--resource"], "fenced");
  EXPECT_EQ(o["--runtime"], "local");
  EXPECT_EQ(o["--concurrency"], "7");
  EXPECT_EQ(o["--keys"], "3");
  EXPECT_EQ(o["--hold-ms"], "11");
  EXPECT_EQ(o["--ttl-ms"], "222");
  EXPECT_EQ(o["--pause-ms"], "333");
  EXPECT_EQ(o["--nemesis-interval"], "444");
  EXPECT_EQ(o["--op-timeout-ms"], "5000");
  EXPECT_EQ(o["--time-limit"], "2.5");
  EXPECT_EQ(o["--seed"], "18446744073709551615");
  EXPECT_EQ(o["--name"], "redis-lock-pause-client+pause-server-fenced");
  EXPECT_EQ(o["--store"], (std::filesystem::current_path() / "some/store").string());
}

TEST(RunConfigRepro, AnAdaptersOptionsAreRecordedWithTheirDefaultsAndReadBack) {
  RunConfig c;
  c.backend = "zookeeper";
  c.opts.set("client", "kazoo");
  c.client_opts = {"lost_on=lost"};
  c.seed = 5;
  c.resolve();
  EXPECT_EQ(c.to_json()["client_options"], nlohmann::json({{"lost_on", "lost"}}));
  const std::vector<std::string> args = c.repro_args();
  auto at = std::find(args.begin(), args.end(), "--client-opt");
  ASSERT_NE(at, args.end());
  ASSERT_NE(at + 1, args.end());
  EXPECT_EQ(at[1], "lost_on=lost");
  RunConfig back = RunConfig::from_json(c.to_json(), "config.json");
  back.resolve();
  EXPECT_EQ(back.client_options, c.client_options);

  RunConfig tooz;
  tooz.backend = "etcd";
  tooz.opts.set("client", "tooz");
  tooz.resolve();
  EXPECT_EQ(tooz.to_json()["client_options"], nlohmann::json({{"etcd_api", "v3"}, {"etcd3gw_shim", "on"}})) << "defaults are recorded too";
  nlohmann::json old = tooz.to_json();
  old.erase("client_options");  // a run from before --client-opt
  EXPECT_TRUE(RunConfig::from_json(old, "config.json").client_opts.empty());
}

TEST(RunConfigRepro, NoFaultsIsNoneAndWholeSecondsHaveNoDecimals) {
  RunConfig c;
  c.nemesis = {"none"};
  c.opts.set("time-limit", 30);
  c.seed = 5;
  c.resolve();
  auto o = options_of(c.repro_args());
  EXPECT_EQ(o["--nemesis"], "none");
  EXPECT_EQ(o["--backend-opt"], "persistence=none") << "defaults are recorded too";
  EXPECT_EQ(o["--time-limit"], "30");
  EXPECT_EQ(o["--seed"], "5");
}

TEST(RunConfigPlan, APlansFaultsBecomeTheRunsAndItsProblemsAreNamed) {
  TempDir dir;
  const std::string plan = (dir.path() / "p.json").string();
  std::ofstream(plan) << R"([{"at_ms": 0, "do": "cut", "grudge": {"c1": ["n1"]}},
                            {"after_ms": 10, "do": "kill", "nodes": ["n1"]}])";
  RunConfig c;
  c.plan = plan;
  c.runtime = "netns";
  c.seed = 7;
  c.resolve();
  EXPECT_EQ(c.nemesis, (std::vector<std::string>{"kill-server", "partition-nodes"}));
  EXPECT_EQ(c.name, "redis-lock-append-plan-p-unfenced");
  EXPECT_EQ(c.input_problem(), std::nullopt);
  auto o = options_of(c.repro_args());
  EXPECT_EQ(o["--plan"], plan);
  EXPECT_FALSE(o.contains("--nemesis")) << "the plan's faults come from the plan";
  EXPECT_EQ(RunConfig::from_json(c.to_json(), "config.json").plan, plan);

  RunConfig short_pause = c;  // a plan's pause has its own length: --pause-ms is not its
  std::ofstream(plan) << R"([{"at_ms": 0, "do": "pause", "node": "c1", "for_ms": 500}])";
  short_pause.opts.set("time-limit", 2);
  short_pause.resolve();
  EXPECT_EQ(short_pause.nemesis, std::vector<std::string>{"pause-client"});
  EXPECT_EQ(short_pause.input_problem(), std::nullopt);
  std::ofstream(plan) << R"([{"at_ms": 0, "do": "cut", "grudge": {"c1": ["n1"]}},
                            {"after_ms": 10, "do": "kill", "nodes": ["n1"]}])";

  RunConfig local = c;
  local.runtime = "local";
  ASSERT_TRUE(local.input_problem().has_value());
  EXPECT_NE(local.input_problem()->find("partition-nodes\" needs a runtime that cuts the network"), std::string::npos)
      << *local.input_problem();

  RunConfig bad;
  bad.plan = (dir.path() / "missing.json").string();
  bad.resolve();
  ASSERT_TRUE(bad.input_problem().has_value());
  EXPECT_NE(bad.input_problem()->find("--plan: " + bad.plan + ":0: cannot read the plan file"), std::string::npos)
      << *bad.input_problem();

  RunConfig drawn;
  drawn.nemesis = {"partition-nodes"};
  drawn.runtime = "netns";
  drawn.resolve();
  ASSERT_TRUE(drawn.input_problem().has_value());
  EXPECT_NE(drawn.input_problem()->find("acts only as a --plan step says"), std::string::npos);
}

TEST(RunConfigRepro, TimeLimitSurvivesTheRoundTrip) {
  // 6 decimals would turn 0.0010004 s into "0.001", and a repro of
  // `--pause-ms 1 --time-limit 0.0010004` would then be refused.
  for (double limit : {2.5, 30.0, 2.0000004, 0.0010004}) {
    RunConfig c;
    c.opts.set("time-limit", limit);
    c.seed = 1;
    c.resolve();
    double back = std::stod(options_of(c.repro_args())["--time-limit"]);
    EXPECT_EQ(back, limit);
  }
}

}  // namespace
}  // namespace fencecheck::testing
