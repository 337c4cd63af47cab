// `fencecheck run` with the nemesis suite (label `integration`): every family mixed for
// 60 s leaves no namespace, firewall rule, process, offset file or stopped process behind
// — after a normal end, after Ctrl-C, and after SIGKILL + `fencecheck clean`; Redis under
// clock-bump with a fenced resource shows what fencing buys; kill-client retires the
// killed worker's process; a replay applies the same faults.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>

#include "tests/integration/run_fixture.h"
#include "tests/integration/run_processes.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;

const std::vector<std::string> kEveryFamily = {
    "--nemesis",
    "pause-client,partition-halves,partition-one,partition-holder,clock-bump,clock-strobe,kill-server,kill-client",
    "--nemesis-interval", "1500", "--pause-ms", "1000", "--restart-ms", "300", "--resource", "fenced"};

class NemesisRun : public RunTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "partitions need the netns runtime (root)";
    RunTest::SetUp();
  }
  // Nothing of the run is left on the machine: its namespaces (and the rules in them), its
  // process groups, its control directory (sockets, clock offset files), its state file,
  // and no process it started, stopped or not (`started`: a ProcessWatch of the
  // controller; other tests' runs, which may pause their own processes, are not looked at).
  void expect_nothing_left(const json& state, const std::map<int, std::string>& started) {
    std::string id = state["run_id"];
    auto netns = run_command("ip netns list");
    EXPECT_EQ(netns.out.find("fc-" + id), std::string::npos) << netns.out;
    for (const auto& g : state["process_groups"]) {
      int pgid = g["pgid"];
      bool gone = false;
      for (int i = 0; i < 50 && !gone; ++i) {
        gone = ::kill(-pgid, 0) != 0;
        if (!gone) std::this_thread::sleep_for(milliseconds(100));
      }
      EXPECT_TRUE(gone) << "process group " << pgid << " survived";
    }
    EXPECT_FALSE(fs::exists("/tmp/fc-" + id)) << "control directory with the clock files";
    EXPECT_FALSE(fs::exists("/run/fencecheck/" + id + ".json"));
    EXPECT_GT(started.size(), 3u) << "the watch saw too few of the run's processes";
    for (const auto& p : survivors(started, std::chrono::seconds(5))) ADD_FAILURE() << "process " << p << " left";
  }
  // The state file of the run controller `pid` started, once its history has ops.
  json state_of(pid_t pid) {
    for (int i = 0; i < 300; ++i) {
      std::error_code ec;
      for (const auto& f : fs::directory_iterator("/run/fencecheck", ec)) {
        if (f.path().extension() != ".json") continue;
        json s = json::parse(std::ifstream(f.path()), nullptr, false);
        if (!s.is_discarded() && s["controller"]["pid"] == pid) return s;
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return json();
  }
};

TEST_F(NemesisRun, EveryFamilyFor60SecondsThenNothingIsLeft) {
  std::vector<std::string> args = kEveryFamily;
  args.insert(args.end(), {"--time-limit", "60", "--seed", "11"});
  pid_t pid = spawn_run(args);
  ProcessWatch watch(pid);
  json state = state_of(pid);
  ASSERT_FALSE(state.is_null()) << controller_log();
  int code = exit_code(pid);
  const auto& started = watch.stop();
  EXPECT_TRUE(code == 0 || code == 1) << controller_log();
  json res = results();
  EXPECT_EQ(res["health"]["sound"], true) << res["health"].dump(2);
  for (const char* f : {"pause", "partition", "heal", "clock-bump", "kill", "start"}) {
    EXPECT_GT(history_lines_containing(std::string("\"f\":\"") + f + "\""), 0u) << f << " never happened";
  }
  expect_nothing_left(state, started);
}

TEST_F(NemesisRun, CtrlCMidFaultLeavesNothing) {
  std::vector<std::string> args = kEveryFamily;
  args.insert(args.end(), {"--time-limit", "60", "--seed", "12"});
  pid_t pid = spawn_run(args);
  ProcessWatch watch(pid);
  json state = state_of(pid);
  ASSERT_FALSE(state.is_null()) << controller_log();
  ASSERT_TRUE(wait_for_history("\"process\":\"nemesis\"", 3)) << controller_log();
  ::kill(pid, SIGINT);
  int code = exit_code(pid);
  EXPECT_TRUE(code == 1 || code == 2) << controller_log();
  expect_nothing_left(state, watch.stop());
}

TEST_F(NemesisRun, SigkillThenCleanLeavesNothing) {
  std::vector<std::string> args = kEveryFamily;
  args.insert(args.end(), {"--time-limit", "60", "--seed", "13"});
  pid_t pid = spawn_run(args);
  ProcessWatch watch(pid);
  json state = state_of(pid);
  ASSERT_FALSE(state.is_null()) << controller_log();
  ASSERT_TRUE(wait_for_history("\"process\":\"nemesis\"", 3)) << controller_log();
  json latest_state = state_of(pid);  // with every process group recorded so far
  ::kill(pid, SIGKILL);
  exit_code(pid);
  const auto& started = watch.stop();
  // This run only: a concurrent test's killed run is that test's to clean.
  auto clean = run_command(std::string(FENCECHECK_BIN) + " clean --run " + latest_state["run_id"].get<std::string>());
  EXPECT_EQ(clean.code, 0) << clean.out;
  expect_nothing_left(latest_state, started);
}

// Issue 8's check: a single redis-server whose clock jumps, a fenced resource. Leases
// expire early, so two clients hold the lock at once; the counter still only goes up and
// the resource refuses every stale access.
TEST_F(NemesisRun, RedisClockBumpBreaksExclusionButNotTheFence) {
  auto r = run("--nemesis clock-bump --nemesis-interval 1000 --resource fenced --time-limit 15 --seed 21");
  ASSERT_EQ(r.code, 1) << r.out;
  json res = results();
  EXPECT_EQ(res["checkers"]["exclusion"]["valid"], false);
  EXPECT_EQ(res["checkers"]["tokens"]["valid"], true);
  EXPECT_EQ(res["checkers"]["resource"]["valid"], true) << res["checkers"]["resource"].dump(2);
}

TEST_F(NemesisRun, KillClientRetiresTheKilledWorkersProcess) {
  auto r = run("--nemesis kill-client --nemesis-interval 500 --restart-ms 200 --time-limit 10 --seed 22");
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.out;
  json res = results();
  EXPECT_EQ(res["health"]["sound"], true) << "a kill the nemesis made is no bench failure";
  ASSERT_GT(history_lines_containing("\"f\":\"kill\""), 0u);
  EXPECT_GT(history_lines_containing("killed by the nemesis") + history_lines_containing("worker unreachable"), 0u)
      << "the killed worker's client was retired with an info";
  EXPECT_EQ(res["checkers"]["exclusion"]["valid"], true) << res["checkers"]["exclusion"].dump(2);
}

TEST_F(NemesisRun, ReplayAppliesTheSameFaultsAtTheSameOffsets) {
  auto first = run("--nemesis partition-halves,clock-bump --nemesis-interval 700 --time-limit 6 --seed 23");
  ASSERT_TRUE(first.code == 0 || first.code == 1) << first.out;
  fs::path original = latest();
  auto again = run_command(original.string() + "/repro.sh --name replayed");
  ASSERT_TRUE(again.code == 0 || again.code == 1) << again.out;
  // Each fault with its offset from the start of the test phase (the first client op), per
  // fault: families run on their own threads, so two families' lines due at nearly the same
  // instant may be recorded in either order.
  auto faults = [](const fs::path& dir) {
    std::map<std::string, std::vector<std::pair<double, json>>> out;
    std::ifstream in(dir / "history.jsonl");
    std::optional<double> start;
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line);
      double t = j["time"].get<double>() / 1e9;
      if (j["process"] != "nemesis") {
        if (!start) start = t;
        continue;
      }
      json value = j["value"];
      value.erase("planned_ns");  // when each run's schedule meant it: its own instant
      out[value["fault"].get<std::string>()].emplace_back(t, json{j["f"], value});
    }
    for (auto& [fault, lines] : out) {
      for (auto& [t, f] : lines) t = std::max(0.0, t - start.value_or(0));
    }
    return out;
  };
  auto a = faults(original), b = faults(latest());
  std::size_t total = 0;
  for (const auto& [fault, lines] : a) total += lines.size();
  ASSERT_GE(total, 4u);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [fault, lines] : a) {
    const auto& again = b[fault];
    ASSERT_EQ(lines.size(), again.size()) << fault;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i].second, again[i].second) << fault << " " << i;
      EXPECT_NEAR(lines[i].first, again[i].first, 0.25) << fault << " " << i;
    }
  }
}

}  // namespace
}  // namespace fencecheck::testing
