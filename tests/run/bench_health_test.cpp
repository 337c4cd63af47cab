// BenchHealth against real processes under the local runtime: an unexpected death and an
// unprompted SIGSTOP are problems, a crash or pause the nemesis asked for is not, a stall
// counts only while no fault is in force, and the health block says what happened.
#include "harness/run/bench_health.h"

#include <signal.h>

#include <gtest/gtest.h>

#include <thread>

#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/run/temp_dir.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;

class BenchHealthTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_->create({"n1", "c1"}); }
  void TearDown() override { runtime_->destroy(); }

  Process& spawn(const std::string& name, const std::string& script) {
    return runtime_->spawn({"n1", name, {"sh", "-c", script}, {}, dir_.path() / (name + ".log"), {}, {}});
  }
  // Polls until a poll reports something or 3 s pass.
  std::vector<std::string> poll_until_problem(BenchHealth& h, bool fault = false) {
    for (int i = 0; i < 300; ++i) {
      auto found = h.poll(fault);
      if (!found.empty()) return found;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return {};
  }

  TempDir dir_;
  RunState state_{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime_ = make_runtime("local", state_.run_id(), state_);
  HistoryRecorder history_{dir_.path() / "history.jsonl", HistoryRecorder::monotonic_ns()};
};

TEST_F(BenchHealthTest, AnUnexpectedDeathIsAProblemNamingTheProcessAndItsLog) {
  BenchHealth health(*runtime_, history_, {milliseconds(60'000)});
  Process& p = spawn("server", "echo 'FATAL: out of cheese'; exit 3");
  auto found = poll_until_problem(health);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("server on node n1 (pid " + std::to_string(p.pid()) + ") exited with code 3"),
            std::string::npos)
      << found[0];
  EXPECT_NE(found[0].find("FATAL: out of cheese"), std::string::npos) << "the log tail is quoted";
  EXPECT_TRUE(health.poll(false).empty()) << "each problem is reported once";
  EXPECT_FALSE(health.sound());
  health.finish(history_.now());
  nlohmann::json j = health.to_json();
  EXPECT_EQ(j["sound"], false);
  ASSERT_EQ(j["processes_died"].size(), 1u);
  EXPECT_EQ(j["processes_died"][0]["name"], "server");
}

// A worker that dies unprompted stops its client: that is one problem, the death, whether
// the client or poll() sees it first — not one more line for the client.
TEST_F(BenchHealthTest, AWorkerDeathSeenByItsClientIsReportedOnce) {
  for (bool client_first : {true, false}) {
    BenchHealth health(*runtime_, history_, {milliseconds(60'000)});
    Process& worker = spawn("worker", "exit 7");
    for (int i = 0; i < 300 && worker.alive(); ++i) std::this_thread::sleep_for(milliseconds(10));
    ASSERT_FALSE(worker.alive());
    if (client_first) health.worker_died("c1", worker, "worker unreachable");
    // Whoever saw it first, the poll after it returns the death: the runner ends the test.
    EXPECT_EQ(health.poll(false).size(), 1u);
    if (!client_first) health.worker_died("c1", worker, "worker unreachable");
    EXPECT_TRUE(health.poll(false).empty());
    auto problems = health.problems();
    ASSERT_EQ(problems.size(), 1u) << (client_first ? "client first" : "poll first");
    EXPECT_NE(problems[0].find("exited with code 7"), std::string::npos) << problems[0];
    health.finish(history_.now());
    EXPECT_EQ(health.to_json()["processes_died"].size(), 1u);
    worker.stop(milliseconds(0));
  }
}

TEST_F(BenchHealthTest, CrashesAndPausesTheNemesisAskedForAreNotProblems) {
  BenchHealth health(*runtime_, history_, {milliseconds(60'000)});
  Process& crashed = spawn("crashed", "sleep 30");
  Process& paused = spawn("paused", "sleep 30");
  Process& stopped = spawn("stopped", "sleep 30");
  crashed.crash(test_deadline());
  paused.pause(test_deadline());
  stopped.stop(milliseconds(1000));
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(health.poll(true).empty());
    std::this_thread::sleep_for(milliseconds(20));
  }
  paused.resume(test_deadline());
  EXPECT_TRUE(health.sound());
}

TEST_F(BenchHealthTest, AStopNoFaultAskedForIsAProblem) {
  BenchHealth health(*runtime_, history_, {milliseconds(60'000)});
  Process& p = spawn("server", "sleep 30");
  // Under load a fresh process can spend seconds in exec (state D); stop it once it runs.
  for (int i = 0; i < 1000 && os::process_state(p.pid()) != 'S'; ++i) std::this_thread::sleep_for(milliseconds(10));
  p.signal(SIGSTOP, test_deadline());  // someone else's SIGSTOP: Process::pause() was not called
  auto found = poll_until_problem(health);
  p.signal(SIGCONT, test_deadline());
  ASSERT_EQ(found.size(), 1u) << "state " << os::process_state(p.pid());
  EXPECT_NE(found[0].find("is stopped (SIGSTOP) although no fault paused it"), std::string::npos) << found[0];
}

TEST_F(BenchHealthTest, AStallCountsOnlyWhileNoFaultIsInForce) {
  BenchHealth health(*runtime_, history_, {milliseconds(150)});
  history_.record(0, OpType::kInvoke, OpFn::kRead, "k", nullptr, "c1");
  history_.record(0, OpType::kOk, OpFn::kRead, "k", nullptr, "c1");
  for (int i = 0; i < 30; ++i) {  // 300 ms without an ok op, all of it under a fault
    EXPECT_TRUE(health.poll(true).empty());
    std::this_thread::sleep_for(milliseconds(10));
  }
  auto found = poll_until_problem(health, false);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("no client op succeeded for"), std::string::npos) << found[0];
  EXPECT_NE(found[0].find("while no fault was in force"), std::string::npos) << found[0];
}

TEST_F(BenchHealthTest, ATestWithoutAnyOkOpIsAProblemAndMostlyUnreachableIsAWarning) {
  {
    BenchHealth health(*runtime_, history_, {milliseconds(60'000)});
    history_.record(0, OpType::kInvoke, OpFn::kRead, "k", nullptr, "c1");
    history_.record(0, OpType::kFail, OpFn::kRead, "k", nullptr, "c1", "refused", true);
    health.finish(history_.now());
    ASSERT_EQ(health.problems().size(), 1u);
    EXPECT_NE(health.problems()[0].find("nothing was tested"), std::string::npos);
  }
  BenchHealth health(*runtime_, history_, {milliseconds(60'000)});
  history_.record(1, OpType::kInvoke, OpFn::kRead, "k", nullptr, "c1");
  history_.record(1, OpType::kOk, OpFn::kRead, "k", nullptr, "c1");
  for (int i = 0; i < 3; ++i) {
    history_.record(1, OpType::kInvoke, OpFn::kRead, "k", nullptr, "c1");
    history_.record(1, OpType::kFail, OpFn::kRead, "k", nullptr, "c1", "unreachable", true);
  }
  health.finish(history_.now());
  EXPECT_TRUE(health.sound());
  nlohmann::json j = health.to_json();
  ASSERT_EQ(j["warnings"].size(), 1u) << j.dump(2);
  EXPECT_NE(j["warnings"][0].get<std::string>().find("could not even be attempted"), std::string::npos);
  EXPECT_EQ(j["ops_not_sent"], 4);
  EXPECT_EQ(j["ops"]["ok"], 1);
  EXPECT_EQ(j["ops_by_f"]["read"]["fail"], 4);
  EXPECT_GE(j["longest_without_ok_s"].get<double>(), 0.0);
}

TEST_F(BenchHealthTest, ClientsThatStopAreProblems) {
  BenchHealth health(*runtime_, history_, {milliseconds(60'000)});
  health.client_stopped("c2", "it reached 1000 ops of unknown outcome");
  EXPECT_EQ(health.problems(), std::vector<std::string>{"client c2 stopped: it reached 1000 ops of unknown outcome"});
}

}  // namespace
}  // namespace fencecheck::testing
