// Runs the real `fencecheck run` with bad options: exit 3, one clear message, and no run
// directory left behind. No test here starts a server.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "harness/run/run_config.h"
#include "tests/run/temp_dir.h"

namespace fencecheck::testing {
namespace {

struct Run {
  int code;
  std::string out;  // stdout and stderr
};

Run fencecheck(const std::string& args) {
  std::string cmd = std::string(FENCECHECK_BIN) + " " + args + " 2>&1 </dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  Run r{-1, ""};
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

struct BadRun {
  std::string args;
  std::string expected;  // part of the one-line message
};

class RunCliBadOption : public ::testing::TestWithParam<BadRun> {};

TEST_P(RunCliBadOption, Exit3OneMessageNoRunDirectory) {
  TempDir tmp;
  auto store = tmp.path() / "store";
  auto r = fencecheck("run --store " + store.string() + " --time-limit 10 " + GetParam().args);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find(GetParam().expected), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(r.out), 1u) << r.out;
  EXPECT_FALSE(std::filesystem::exists(store)) << "a refused run must leave nothing behind";
}

INSTANTIATE_TEST_SUITE_P(
    Options, RunCliBadOption,
    ::testing::Values(BadRun{"--backend bogus", "unknown backend \"bogus\"; valid backends: redis"},
                      BadRun{"--workload bogus", "unknown workload \"bogus\"; valid workloads: lock, lock-append"},
                      BadRun{"--nemesis pause-holder,bogus",
                             "unknown fault \"bogus\"; valid faults: pause-holder, pause-acquirer, pause-after-send, pause-client, pause-server"},
                      BadRun{"--ttl-ms -5", "--ttl-ms must be positive"},
                      BadRun{"--pause-ms 60000", "--pause-ms (60000 ms) must be shorter than --time-limit"},
                      BadRun{"--resource half", "--resource must be fenced or unfenced, not \"half\""},
                      BadRun{"--runtime kubernetes", "--runtime must be one of docker, local, netns"},
                      BadRun{"--runtime netns --nemesis freeze-client",
                             "fault \"freeze-client\" needs a runtime that freezes a whole node (every process at "
                             "once, by the cgroup freezer), which --runtime netns cannot: use --runtime docker"},
                      BadRun{"--concurrency 0", "--concurrency must be between 1 and 64"},
                      BadRun{"--keys 0", "--keys must be between 1 and 1000"},
                      BadRun{"--nemesis-interval 0", "--nemesis-interval must be positive"},
                      BadRun{"--name a/b", "--name must not contain '/'"}));

TEST(RunCli, UnparsableOptionIsExit3AndNamesIt) {
  TempDir tmp;
  auto store = tmp.path() / "store";
  for (std::string bad : {"--concurrency abc", "--bogus-flag 1", "--ttl-ms"}) {
    auto r = fencecheck("run --store " + store.string() + " " + bad);
    EXPECT_EQ(r.code, 3) << bad << ": " << r.out;
    EXPECT_NE(r.out.find(bad.substr(0, bad.find(' '))), std::string::npos) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(store));
}

TEST(RunCli, HelpListsTheOptions) {
  auto r = fencecheck("run --help");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* option : {"--nemesis", "--backend", "--workload", "--resource", "--seed", "--time-limit",
                             "--pause-ms", "--clock-min-ms", "--model", "--linear-time-limit",
                             "--linear-memory-limit", "default: max(5000, pause + 2000)"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing from:\n" << r.out;
  }
}

// The checker options are declared once, with the checkers: `check` shows the same help
// under its older names, and `run` under names that do not clash with its --time-limit.
TEST(RunCli, CheckAndRunShowTheSameCheckerOptions) {
  auto run = fencecheck("run --help");
  auto check = fencecheck("check --help");
  EXPECT_EQ(check.code, 0) << check.out;
  const std::string help = "linearizable: seconds of search before the verdict is unknown [s; default: 60]";
  EXPECT_NE(run.out.find(help), std::string::npos) << run.out;
  EXPECT_NE(check.out.find(help), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("--time-limit"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("--linear-time-limit"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("--memory-limit"), std::string::npos) << check.out;
}

TEST(RunCli, ABadCheckerOptionIsRefusedBeforeAnythingStarts) {
  TempDir tmp;
  auto store = tmp.path() / "store";
  auto r = fencecheck("run --store " + store.string() + " --linear-time-limit 0");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("--linear-time-limit must be positive"), std::string::npos) << r.out;
  r = fencecheck("run --store " + store.string() + " --linear-memory-limit lots");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("--linear-memory-limit: \"lots\" is not a size"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(store));
}

TEST(RunCli, ReproArgumentsParseBackToTheSameConfig) {
  // Every option repro.sh passes must be one `fencecheck run` accepts: a repro of a run
  // whose only fault is its name gets past the parser and all the other checks.
  RunConfig c;
  c.runtime = "local";
  c.nemesis = {"pause-client", "pause-server"};
  c.opts.set("time-limit", 2.5);
  c.opts.set("pause-ms", 100);
  c.seed = 77;
  TempDir tmp;
  c.store = (tmp.path() / "store").string();
  c.name = "bad/name";
  c.resolve();
  std::string cmd = "run";
  for (const auto& a : c.repro_args()) cmd += " '" + a + "'";
  auto r = fencecheck(cmd);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("--name must not contain '/'"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(c.store));
}

}  // namespace
}  // namespace fencecheck::testing
