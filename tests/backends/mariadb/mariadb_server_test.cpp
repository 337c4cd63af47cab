// The mariadb backend's servers under each runtime: a standalone server and a three-node
// Galera cluster start, answer, survive a crash and a restart of a node (a Galera node
// rejoins: the cluster is three again), and leave no server behind. Setup and rejoin times
// are printed for the record; no test judges them (benchmarks do that).
#include "backends/mariadb/mariadb_server.h"

#include <gtest/gtest.h>

#include <iostream>
#include <thread>

#include "tests/backends/mariadb/mariadb_fixture.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

class MariadbServerTest : public MariadbTest {
 public:
  using MariadbTest::sql;
};

// Polls statement (a status row: name, value) on node until its value is want, up to
// timeout; the time it took.
std::optional<Millis> until_value(MariadbServerTest& t, const std::string& node, const std::string& statement,
                                  const std::string& want, Millis timeout) {
  auto t0 = std::chrono::steady_clock::now();
  while (since(t0) < timeout) {
    MariadbResult r = t.sql(node, statement);
    if (r.status == MariadbResult::Status::kOk && !r.rows.empty() && r.rows[0].size() > 1 && r.rows[0][1] == want) {
      return since(t0);
    }
    std::this_thread::sleep_for(50ms);
  }
  return std::nullopt;
}

TEST_P(MariadbServerTest, StandaloneStartsAnswersAndComesBackAfterAKillAndARestart) {
  Millis first = start_server();
  std::cout << "mariadb standalone setup: " << first.count() << " ms\n";
  ASSERT_EQ(server_->nodes(), std::vector<std::string>({"n1"}));
  EXPECT_EQ(value("n1", "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'fencecheck'"), "2")
      << "the schema: leases and sessions";
  EXPECT_EQ(value("n1", "SELECT @@innodb_snapshot_isolation"), "0");
  EXPECT_EQ(value("n1", "SELECT @@wait_timeout"), "28800");
  ASSERT_EQ(sql("n1", "INSERT INTO fencecheck.leases VALUES ('kept', 'x', NOW(6), 7)").status,
            MariadbResult::Status::kOk);

  server_->kill("n1", test_deadline());
  EXPECT_FALSE(server_->running("n1"));
  EXPECT_NE(sql("n1", "SELECT 1").status, MariadbResult::Status::kOk) << "a killed server answered";
  auto t0 = std::chrono::steady_clock::now();
  server_->start("n1");
  std::cout << "mariadb standalone start after a crash: " << since(t0).count() << " ms\n";
  EXPECT_EQ(value("n1", "SELECT token FROM fencecheck.leases WHERE name = 'kept'"), "7")
      << "a committed row survives the crash (InnoDB flushes its log at each commit)";

  server_->stop("n1", test_deadline());
  EXPECT_FALSE(server_->running("n1"));
  server_->start("n1");
  EXPECT_EQ(value("n1", "SELECT 1"), "1");
}

TEST_P(MariadbServerTest, OptionsReachTheServer) {
  start_server({"wait_timeout_s=2", "innodb_snapshot_isolation=ON"});
  EXPECT_EQ(value("n1", "SELECT @@wait_timeout"), "2");
  EXPECT_EQ(value("n1", "SELECT @@innodb_snapshot_isolation"), "1");
  EXPECT_EQ(value("n1", "SELECT @@wsrep_on"), "0");
}

TEST_P(MariadbServerTest, GaleraStartsThreeNodesAndACrashedNodeRejoins) {
  if (GetParam() == "local") GTEST_SKIP() << "Galera runs under netns here (one address per node), to keep CI short";
  Millis setup = start_server({"cluster=galera", "wsrep_sync_wait=1"});
  std::cout << "mariadb galera setup (3 nodes): " << setup.count() << " ms\n";
  ASSERT_EQ(server_->nodes(), std::vector<std::string>({"n1", "n2", "n3"}));
  for (const char* node : {"n1", "n2", "n3"}) {
    EXPECT_EQ(value(node, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = "
                          "'WSREP_CLUSTER_SIZE'"),
              "3")
        << node;
    EXPECT_EQ(value(node, "SELECT @@wsrep_sync_wait"), "1") << node;
  }
  ASSERT_EQ(sql("n1", "INSERT INTO fencecheck.leases VALUES ('replicated', 'x', NOW(6), 5)").status,
            MariadbResult::Status::kOk);
  EXPECT_EQ(value("n3", "SELECT token FROM fencecheck.leases WHERE name = 'replicated'"), "5")
      << "a row written on n1 is read on n3 (wsrep_sync_wait=1 waits for it)";

  server_->kill("n2", test_deadline());
  auto shrunk = until_value(*this, "n1", "SHOW STATUS LIKE 'wsrep_cluster_size'", "2", 10s);
  EXPECT_TRUE(shrunk) << "n1 never saw n2 go";
  ASSERT_EQ(sql("n1", "UPDATE fencecheck.leases SET token = 6 WHERE name = 'replicated'").status,
            MariadbResult::Status::kOk)
      << "two of three nodes keep the primary component";
  auto t0 = std::chrono::steady_clock::now();
  server_->start("n2");
  std::cout << "mariadb galera rejoin of a crashed node: " << since(t0).count() << " ms\n";
  EXPECT_TRUE(until_value(*this, "n1", "SHOW STATUS LIKE 'wsrep_cluster_size'", "3", 10s)) << "n2 never rejoined";
  EXPECT_EQ(value("n2", "SELECT token FROM fencecheck.leases WHERE name = 'replicated'"), "6")
      << "the rejoined node has what was written while it was down";

  server_->stop("n3", test_deadline());
  t0 = std::chrono::steady_clock::now();
  server_->start("n3");
  std::cout << "mariadb galera rejoin after a graceful stop: " << since(t0).count() << " ms\n";
  EXPECT_TRUE(until_value(*this, "n3", "SHOW STATUS LIKE 'wsrep_ready'", "ON", 1s));
}

TEST_P(MariadbServerTest, TeardownLeavesNoServerRunning) {
  start_server();
  std::vector<int> pids;
  for (Process* p : server_->processes("n1")) pids.push_back(p->pid());
  ASSERT_FALSE(pids.empty());
  server_->teardown(test_deadline());
  for (int pid : pids) EXPECT_NE(::kill(pid, 0), 0) << "server process " << pid << " outlived teardown";
  server_.reset();
}

INSTANTIATE_TEST_SUITE_P(Runtimes, MariadbServerTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
