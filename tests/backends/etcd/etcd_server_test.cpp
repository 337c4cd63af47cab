// The etcd backend's servers (label `integration`): a 3-member etcd 3.4 cluster started
// through the registry's LockServer (netns as root, else local), a member killed and
// restarted on its data, the leader found and re-elected, a paused member skipped; the
// clock library refused by the Go binary. The clients: etcd_client_test.cpp.
#include "tests/backends/etcd/etcd_cluster.h"

namespace fencecheck::testing {
namespace {

TEST_P(EtcdServerTest, ClusterHasALeaderAndAKilledMemberRestartsOnItsData) {
  start_cluster();
  EXPECT_EQ(server_->nodes(), (std::vector<std::string>{"n1", "n2", "n3"}));
  for (const std::string n : {"n1", "n2", "n3"}) {
    EXPECT_TRUE(std::filesystem::exists(tmp_.path() / "nodes" / n / "data" / "member" / "wal")) << n;
    EXPECT_TRUE(std::filesystem::exists(server_->log_files(n).at(0)));
  }
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);

  Process* victim = server_->processes(*leader).at(0);
  auto killed = Clock::now();
  server_->kill(*leader, test_deadline());
  EXPECT_FALSE(victim->alive());
  EXPECT_TRUE(victim->exit_expected());
  std::optional<std::string> next;
  ASSERT_TRUE(eventually([&] { return (next = server_->leader()) && *next != *leader; }, 20s));
  std::cout << "[ etcd ] " << GetParam() << ": new leader " << *next << " after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed).count() << " ms\n";

  // It rejoins from its WAL (a fresh member with the same name could not: the cluster
  // knows its id), and start() waits until it serves again.
  server_->start(*leader);
  EXPECT_TRUE(server_->running(*leader));
  std::string log = read_text(server_->log_files(*leader).at(0));
  EXPECT_NE(log.find("restarting local member"), std::string::npos) << "not restarted from its data dir";
  EXPECT_TRUE(server_->leader());
}

TEST_P(EtcdServerTest, PausedMemberIsSkippedWhenAskingForTheLeader) {
  start_cluster();
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);
  std::string follower = *leader == "n1" ? "n2" : "n1";
  server_->pause(follower, test_deadline());
  auto t0 = Clock::now();
  EXPECT_EQ(server_->leader(), leader);
  EXPECT_LT(Clock::now() - t0, 400ms);
  server_->resume(follower, test_deadline());
}

// libfcclock's LD_PRELOAD never reaches a static Go binary: etcd never maps its node's
// clock file, so the runner's ServerClocks refuses the shift instead of taking it. (The
// run refuses clock faults on etcd's servers before it starts: etcd_config_test.)
TEST_P(EtcdServerTest, AClockShiftCannotReachEtcdAndIsRefused) {
  runtime_->share(FC_CLOCK_LIB, false);
  NodeClocks clocks(FC_CLOCK_LIB, tmp_.path() / "clock", {"n1", "n2", "n3"});
  runtime_->set_spec_decorator([&](ProcessSpec& s) { clocks.decorate(s); });
  start_cluster();
  EXPECT_EQ(server_->processes("n1").at(0)->spec().preload.size(), 1u) << "the library was offered";
  ServerClocks server_clocks(clocks, *server_, *runtime_);
  try {
    server_clocks.set_offset("n1", 5000ms, test_deadline());
    ADD_FAILURE() << "a clock shift was taken although etcd cannot see it";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot shift the clock of n1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server_clocks.offset("n1"), 0ms);
}

// The runtime this machine runs by default (netns as root): the same probes run under
// local in the client tests (etcd_client_test.cpp).
INSTANTIATE_TEST_SUITE_P(Runtimes, EtcdServerTest, ::testing::Values(default_runtime_kind()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
