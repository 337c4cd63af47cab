// The nemesis's timing promises hold under ssh when a host stops answering (label
// `integration`, the ssh fixture): the sshd of one fixture host is SIGSTOPped — its TCP
// connections stay up, nothing comes back — and
//   - a heal with that host among its nodes returns by its deadline, naming the host as not
//     healed, and heals every other host;
//   - Ctrl-C of a run in that state exits within 3 s, its final heal recording the host as
//     not healed; `fencecheck clean --nodes-file` then removes what the run left there.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/integration/run_fixture.h"
#include "tests/runtime/test_util.h"
#include "tests/ssh/ssh_support.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The network namespace of the fixture host the ssh runtime gives node n1 (the first host
// of role "server" in the nodes file).
std::string first_server_namespace() {
  std::ifstream in(fixture_nodes_file());
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"server\"") == std::string::npos) continue;
    auto at = line.find("ip netns exec ");
    if (at == std::string::npos) continue;
    at += 14;
    return line.substr(at, line.find(' ', at) - at);
  }
  return "";
}

// SIGSTOPs (or SIGCONTs) every sshd process of a fixture host: its listener and the
// sessions of every connection already made. Its other processes (a server the run
// started there) go on.
void signal_sshd(const std::string& ns, const char* sig) {
  run_command("for p in $(ip netns pids " + ns + "); do [ \"$(cat /proc/$p/comm 2>/dev/null)\" = sshd ] && kill -" +
              sig + " $p; done; true");
}

// Resumes the host's sshd whatever the test's outcome.
struct SilentHost {
  explicit SilentHost(std::string ns) : ns_(std::move(ns)) { signal_sshd(ns_, "STOP"); }
  ~SilentHost() { signal_sshd(ns_, "CONT"); }
  std::string ns_;
};

TEST(SshDeadline, AHealWithOneHostSilentReturnsByItsDeadlineAndNamesTheHost) {
  FC_REQUIRE_SSH_FIXTURE();
  ASSERT_EQ(what_runs_left_on_hosts(), "") << "an earlier test left this";
  const std::string ns = first_server_namespace();
  ASSERT_FALSE(ns.empty()) << "no server host in " << fixture_nodes_file();
  RunState state(RunState::new_run_id());
  std::unique_ptr<Runtime> runtime = make_ssh_runtime(state.run_id(), state, fixture_nodes_file());
  runtime->create({"n1", "c1"});
  ASSERT_TRUE(runtime->cut(complete_grudge({{"n1"}, {"c1"}}), test_deadline()).empty());
  {
    SilentHost silent(ns);
    const auto t = Clock::now();
    const NetFailures failures = runtime->heal(Deadline::after(2000ms));
    const auto took = Clock::now() - t;
    EXPECT_LT(took, 2500ms) << "the heal outlived its deadline";
    ASSERT_EQ(failures.size(), 1u) << "c1's host answers: only n1 stays unhealed";
    EXPECT_EQ(failures.begin()->first, "n1");
    EXPECT_NE(failures.begin()->second.find("no answer within 2000 ms"), std::string::npos) << failures.begin()->second;
  }
  // Once the host answers again the next heal rewrites it.
  EXPECT_TRUE(runtime->heal(test_deadline()).empty());
  runtime->destroy();
  EXPECT_EQ(what_runs_left_on_hosts(), "");
}

class SshCtrlC : public RunTest {
 protected:
  void SetUp() override {
    FC_REQUIRE_SSH_FIXTURE();
    RunTest::SetUp();
    ASSERT_EQ(what_runs_left_on_hosts(), "") << "an earlier test left this";
  }
};

TEST_F(SshCtrlC, ARunWithAHostSilentExitsWithin3sOfCtrlC) {
  const std::string ns = first_server_namespace();
  ASSERT_FALSE(ns.empty());
  const std::string plan = store_ + "/cut.json";
  std::ofstream(plan) << R"([{"at_ms": 0, "do": "cut", "grudge": {"c1": ["n1"]}}])";
  pid_t pid = spawn_run({"--runtime", "ssh", "--nodes-file", fixture_nodes_file(), "--backend", "redis", "--plan", plan,
                         "--time-limit", "120", "--resource", "fenced"});
  ASSERT_TRUE(wait_for_history("\"partition-nodes\"")) << controller_log();
  double seconds = 0;
  int code = -1;
  {
    SilentHost silent(ns);
    std::this_thread::sleep_for(500ms);
    const auto t = Clock::now();
    ::kill(pid, SIGINT);
    code = exit_code(pid);
    seconds = std::chrono::duration<double>(Clock::now() - t).count();
  }
  std::cout << "exit " << code << " " << seconds << " s after Ctrl-C\n" << controller_log();
  EXPECT_LT(seconds, 3.0) << controller_log();
  EXPECT_NE(code, 0) << controller_log();
  EXPECT_EQ(history_lines_containing("\"not_healed\":{\"n1\""), 1u)
      << "the final heal must record n1 as not healed\n" << controller_log();
  auto r = run_command(std::string(FENCECHECK_BIN) + " clean --nodes-file " + fixture_nodes_file());
  EXPECT_EQ(r.code, 0) << r.out;
  std::cout << r.out;
  EXPECT_EQ(what_runs_left_on_hosts(), "") << r.out;
}

}  // namespace
}  // namespace fencecheck::testing
