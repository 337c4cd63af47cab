// PostgresServer started for real under each runtime: the LockServer role end to end —
// setup, a pause that freezes every server process (the postmaster's children lead process
// groups of their own), a crash-restart on the same data directory, a graceful stop.
#include "backends/postgres/postgres_server.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>

#include "tests/backends/postgres/postgres_fixture.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool all_stopped(const std::vector<pgproc::ProcId>& procs) {
  for (const auto& p : procs) {
    char s = os::process_state(p.pid);
    if (s != 'T' && s != 't') return false;
  }
  return true;
}

bool none_running(const std::vector<pgproc::ProcId>& procs) {
  for (const auto& p : procs) {
    char s = os::process_state(p.pid);
    if (os::process_is(p.pid, p.start_time) && s != 'Z' && s != 'X') return false;
  }
  return true;
}

TEST_P(PostgresTest, SetsUpAFreshClusterAndServesLocks) {
  Millis setup = start_server();
  std::cout << "[ measured ] postgres setup (initdb + start + lease table) under " << GetParam()
            << ": " << setup.count() << " ms\n";
  EXPECT_EQ(server_->nodes(), std::vector<std::string>{"n1"});
  EXPECT_TRUE(server_->running("n1"));
  std::string conf = read_file(nodes_dir() / "n1/data/postgresql.conf");
  EXPECT_NE(conf.find("listen_addresses = '" + runtime_->node("n1").address + "'"), std::string::npos);
  EXPECT_NE(conf.find("fsync = on"), std::string::npos);
  EXPECT_EQ(server_->log_files("n1"), std::vector<std::filesystem::path>{nodes_dir() / "n1/postgres.log"});
  EXPECT_NE(read_file(server_->log_files("n1")[0]).find("ready to accept connections"), std::string::npos);

  nlohmann::json cfg = server_->client_config();
  EXPECT_EQ(cfg["host"], runtime_->node("n1").address);
  EXPECT_EQ(cfg["port"], runtime_->port("n1", "postgres", 5432));
  EXPECT_EQ(cfg["lock"], "lease");
  auto a = client("c1");
  LockResult g = from("c1", [&] { return a->acquire("k", 5s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  EXPECT_EQ(g.grant->token, 1);  // the lease table was created empty by setup

  auto procs = server_processes();
  EXPECT_GE(procs.size(), 3u) << "the postmaster, its background processes and a backend";
  server_->teardown(test_deadline());
  EXPECT_FALSE(server_->running("n1"));
  EXPECT_TRUE(none_running(procs)) << "teardown leaves no server process behind";
  EXPECT_NE(read_file(server_->log_files("n1")[0]).find("database system is shut down"), std::string::npos)
      << "stop is a clean (fast) shutdown";
  server_->teardown(test_deadline());  // idempotent
}

TEST_P(PostgresTest, PauseFreezesTheBackendsOfOpenSessions) {
  start_server();
  auto a = client("c1");
  LockResult g = from("c1", [&] { return a->acquire("k", 30s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  auto procs = server_processes();
  server_->pause("n1", test_deadline());
  EXPECT_TRUE(all_stopped(procs)) << "every server process is stopped, a's backend included";

  // a's session is open: with only the postmaster stopped its backend would still answer.
  auto t0 = std::chrono::steady_clock::now();
  LockResult r = from("c1", [&] { return a->release(*g.grant); });
  Millis took = since(t0);
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.error;
  EXPECT_LT(took, 1500ms) << "bounded by the command timeout (500 ms)";
  // A new session cannot even start: nothing was sent.
  auto b = client("c2");
  t0 = std::chrono::steady_clock::now();
  LockResult fresh = from("c2", [&] { return b->acquire("k2", 30s); });
  took = since(t0);
  EXPECT_EQ(fresh.outcome, Outcome::kFail) << fresh.error;
  EXPECT_TRUE(fresh.not_sent);
  EXPECT_LT(took, 1500ms) << "bounded by the connect timeout (500 ms)";

  server_->resume("n1", test_deadline());
  EXPECT_FALSE(all_stopped(procs));
  LockResult after = from("c2", [&] { return b->acquire("k2", 30s); });
  EXPECT_EQ(after.outcome, Outcome::kOk) << after.error;
}

// The lease table and its rows survive kill -9 and a start on the same data directory
// (fsync on); advisory locks, which live in sessions, do not.
TEST_P(PostgresTest, CrashRestartKeepsLeasesButNotAdvisoryLocks) {
  start_server();
  auto lease_a = client("c1");
  auto lease_b = client("c2");
  auto adv_a = client("c1", [](nlohmann::json& c) { c["lock"] = "advisory"; });
  auto adv_b = client("c2", [](nlohmann::json& c) { c["lock"] = "advisory"; });
  LockResult lease = from("c1", [&] { return lease_a->acquire("k", 60s); });
  ASSERT_EQ(lease.outcome, Outcome::kOk) << lease.error;
  LockResult adv = from("c1", [&] { return adv_a->acquire("k", 60s); });
  ASSERT_EQ(adv.outcome, Outcome::kOk) << adv.error;

  auto procs = server_processes();
  Process* before = server_->processes("n1")[0];
  server_->kill("n1", test_deadline());
  EXPECT_FALSE(before->alive());
  EXPECT_TRUE(before->exit_expected()) << "a crash the nemesis asked for is not a bench failure";
  EXPECT_TRUE(none_running(procs)) << "every backend died with the postmaster";
  EXPECT_FALSE(server_->running("n1"));
  auto t0 = std::chrono::steady_clock::now();
  server_->start("n1");  // crash recovery on the same data directory
  std::cout << "[ measured ] postgres restart after kill -9 until SELECT 1 under " << GetParam()
            << ": " << since(t0).count() << " ms\n";

  LockResult held = from("c2", [&] { return lease_b->acquire("k", 60s); });
  EXPECT_EQ(held.outcome, Outcome::kFail) << "the lease row survived the crash";
  EXPECT_EQ(held.error, "lock held by another client");
  LockResult released = from("c1", [&] { return lease_a->release(*lease.grant); });
  EXPECT_EQ(released.outcome, Outcome::kOk) << "a reconnects lazily: " << released.error;
  LockResult next = from("c2", [&] { return lease_b->acquire("k", 60s); });
  ASSERT_EQ(next.outcome, Outcome::kOk) << next.error;
  EXPECT_EQ(*next.grant->token, *lease.grant->token + 1);

  LockResult adv_next = from("c2", [&] { return adv_b->acquire("k", 60s); });
  EXPECT_EQ(adv_next.outcome, Outcome::kOk) << "the crash ended a's session and its lock";
  LockResult adv_release = from("c1", [&] { return adv_a->release(*adv.grant); });
  EXPECT_EQ(adv_release.outcome, Outcome::kFail);
}

TEST_P(PostgresTest, StopThenStartServesAgain) {
  start_server({"lock=advisory"});
  auto a = client("c1");
  ASSERT_EQ(from("c1", [&] { return a->acquire("k", 1s); }).outcome, Outcome::kOk);
  server_->stop("n1", test_deadline());
  EXPECT_FALSE(server_->running("n1"));
  LockResult down = from("c1", [&] { return a->acquire("k2", 1s); });
  EXPECT_EQ(down.outcome, Outcome::kFail);
  EXPECT_TRUE(down.not_sent) << down.error;
  server_->start("n1");
  LockResult up = from("c1", [&] { return a->acquire("k", 1s); });
  EXPECT_EQ(up.outcome, Outcome::kOk) << "the stop ended the old session and its lock: " << up.error;
}

// The first bytes of pg_control: the system identifier initdb draws at random.
std::string system_identifier(const std::filesystem::path& data) {
  return read_file(data / "global" / "pg_control").substr(0, 8);
}

// FENCECHECK_CACHE for one test: a directory of the test's own, then unset again.
struct TestCache {
  explicit TestCache(const std::filesystem::path& dir) { ::setenv("FENCECHECK_CACHE", dir.c_str(), 1); }
  ~TestCache() { ::unsetenv("FENCECHECK_CACHE"); }
};

// The only cluster kept in cache (ADD_FAILURE and empty otherwise).
std::filesystem::path kept_cluster(const std::filesystem::path& cache) {
  std::vector<std::filesystem::path> kept;
  for (const auto& entry : std::filesystem::directory_iterator(cache / "postgres")) kept.push_back(entry.path());
  if (kept.size() != 1) {
    ADD_FAILURE() << kept.size() << " entries in " << (cache / "postgres").string() << ", expected one cluster";
    return {};
  }
  return kept[0];
}

// The first setup keeps what initdb made, unconfigured; the next copies it instead of
// running initdb, and still starts with an empty lease table: nothing of the first run's
// went back into the kept cluster.
TEST_P(PostgresTest, ALaterSetupCopiesTheKeptClusterAndStillStartsFresh) {
  TestCache cache(dir_ / "cache");
  start_server();
  const std::filesystem::path kept = kept_cluster(dir_ / "cache");
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.filename().string().rfind("cluster-", 0), 0u) << kept;
  EXPECT_EQ(read_file(kept / "data" / "postgresql.conf").find("written by fencecheck"), std::string::npos)
      << "the kept cluster is initdb's, before any configuration";
  EXPECT_EQ(system_identifier(kept / "data"), system_identifier(nodes_dir() / "n1" / "data"));
  auto a = client("c1");
  LockResult first = from("c1", [&] { return a->acquire("k", 60s); });
  ASSERT_EQ(first.outcome, Outcome::kOk) << first.error;
  EXPECT_EQ(first.grant->token, 1);
  a.reset();
  server_->teardown(test_deadline());

  server_ = backend_->make_server(resolve_backend_options(*backend_, {}));
  auto t0 = std::chrono::steady_clock::now();
  server_->setup(*runtime_, dir_ / "nodes2");
  std::cout << "[ measured ] postgres setup from the kept cluster under " << GetParam() << ": "
            << since(t0).count() << " ms\n";
  EXPECT_EQ(system_identifier(dir_ / "nodes2" / "n1" / "data"), system_identifier(kept / "data"))
      << "a copy of the kept cluster, not a new initdb";
  EXPECT_EQ(kept_cluster(dir_ / "cache"), kept);
  EXPECT_NE(read_file(dir_ / "nodes2" / "n1" / "data" / "postgresql.conf").find("fsync = on"), std::string::npos);
  auto b = client("c2");
  LockResult second = from("c2", [&] { return b->acquire("k", 60s); });
  ASSERT_EQ(second.outcome, Outcome::kOk) << "the first run's lease is not in the copy: " << second.error;
  EXPECT_EQ(second.grant->token, 1);
}

// A kept cluster that was damaged since: the server cannot start, and the error says which
// directory to delete; once it is gone, the next setup runs initdb again.
TEST_P(PostgresTest, ADamagedKeptClusterIsNamedInTheError) {
  TestCache cache(dir_ / "cache");
  start_server();
  server_->teardown(test_deadline());
  const std::filesystem::path kept = kept_cluster(dir_ / "cache");
  ASSERT_FALSE(kept.empty());
  std::filesystem::remove(kept / "data" / "global" / "pg_control");

  server_ = backend_->make_server(resolve_backend_options(*backend_, {}));
  try {
    server_->setup(*runtime_, dir_ / "nodes2");
    ADD_FAILURE() << "a cluster without pg_control started";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find(kept.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("delete that directory"), std::string::npos) << e.what();
  }
  server_->teardown(test_deadline());

  std::filesystem::remove_all(kept);
  server_ = backend_->make_server(resolve_backend_options(*backend_, {}));
  server_->setup(*runtime_, dir_ / "nodes3");
  EXPECT_TRUE(server_->running("n1"));
  EXPECT_EQ(system_identifier(dir_ / "nodes3" / "n1" / "data"), system_identifier(kept_cluster(dir_ / "cache") / "data"))
      << "kept anew";
}

TEST_P(PostgresTest, UnwritableNodesDirIsAHarnessError) {
  std::ofstream(dir_ / "not-a-dir") << "x";
  PostgresServer server(PostgresServerOptions{});
  EXPECT_THROW(server.setup(*runtime_, dir_ / "not-a-dir"), HarnessError);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PostgresTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
