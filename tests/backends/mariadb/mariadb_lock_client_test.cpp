// The mariadb lock clients against a real server under each runtime: named locks (GET_LOCK)
// — grants, refusals, re-entry refused, a lock freed behind its holder's back when its session
// is killed or wait_timeout ends it; every lease mode — grants, refusals, tokens that go up,
// expiry on the server's clock, stale releases refused, and what two acquires that meet on
// the row do under each mode (read-update's lost update); the outcomes of a paused server
// and of no server at all; and leases across the nodes of a Galera cluster.
#include "backends/mariadb/mariadb_lock_client.h"

#include <gtest/gtest.h>

#include <iostream>
#include <thread>

#include "tests/backends/mariadb/mariadb_fixture.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

class MariadbClientTest : public MariadbTest {
 protected:
  // A client with lock=lease and this lease mode, whatever the server's options said;
  // timeout_ms: its command timeout (0: the fixture's).
  std::unique_ptr<LockClient> lease_client(const std::string& name, const std::string& mode, int timeout_ms = 0) {
    return client(name, [&](nlohmann::json& c) {
      c["lock"] = "lease";
      c["lease"] = mode;
      if (timeout_ms > 0) c["command_timeout_ms"] = timeout_ms;
    });
  }
  // A connection of the test's own to n1's server, used from inside c3.
  std::unique_ptr<MariadbConnection> raw_connection() {
    const nlohmann::json s = server_->client_config().at("servers").at(0);
    MariadbConnectParams p;
    p.host = s.at("host").get<std::string>();
    p.port = s.at("port").get<int>();
    p.connect_timeout = p.command_timeout = 2000ms;
    return std::make_unique<MariadbConnection>(std::move(p));
  }
  // The first column of the first row of statement on n1 ("" when none).
  std::string raw_value(const std::string& statement) {
    auto conn = raw_connection();
    return raw(*conn, statement).value().value_or("");
  }
  MariadbResult raw(MariadbConnection& conn, const std::string& statement) {
    MariadbResult r;
    runtime_->run_in("c3", [&] { r = conn.exec(statement); });
    EXPECT_EQ(r.status, MariadbResult::Status::kOk) << statement << ": " << r.error;
    return r;
  }
};

const std::vector<std::string> kLeaseModes = {"read-update", "for-update", "conditional"};

TEST_P(MariadbClientTest, NamedLocksAreExclusiveNotReentrantAndReleasedOnce) {
  start_server({"lock=named"});
  auto a = client("c1");
  auto b = client("c2");
  LockResult g = from("c1", [&] { return a->acquire("k", 30s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  EXPECT_FALSE(g.grant->token) << "named locks have no fencing token";
  ASSERT_TRUE(g.grant->promise);
  EXPECT_EQ(g.grant->promise->to_json(), nlohmann::json({{"valid_ms", nullptr}, {"bound", "connection"}}));
  LockResult again = from("c1", [&] { return a->acquire("k", 30s); });
  EXPECT_EQ(again.outcome, Outcome::kFail) << "MariaDB would say yes; the contract says no";
  EXPECT_NE(again.error.find("re-entrant"), std::string::npos) << again.error;

  LockResult refused = from("c2", [&] { return b->acquire("k", 30s); });
  EXPECT_EQ(refused.outcome, Outcome::kFail);
  EXPECT_FALSE(refused.not_sent);
  EXPECT_EQ(refused.error, "lock held by another client");
  EXPECT_EQ(from("c2", [&] { return b->release(Grant{"k", std::nullopt, "c2:9:x"}); }).outcome, Outcome::kFail);
  LockResult other_key = from("c2", [&] { return b->acquire("other", 30s); });
  EXPECT_EQ(other_key.outcome, Outcome::kOk) << "locks are per key: " << other_key.error;

  EXPECT_EQ(from("c1", [&] { return a->release(*g.grant); }).outcome, Outcome::kOk);
  LockResult twice = from("c1", [&] { return a->release(*g.grant); });
  EXPECT_EQ(twice.outcome, Outcome::kFail);
  EXPECT_EQ(twice.error.rfind("not held", 0), 0u) << twice.error;
  LockResult next = from("c2", [&] { return b->acquire("k", 30s); });
  EXPECT_EQ(next.outcome, Outcome::kOk) << next.error;
}

// The kill-session fault's mechanism: the server ends the holder's session and frees its
// lock; the holder finds out only when it next talks to the server.
TEST_P(MariadbClientTest, AKilledSessionFreesItsNamedLock) {
  start_server({"lock=named"});
  auto a = client("c1");
  auto b = client("c2");
  LockResult g = from("c1", [&] { return a->acquire("k", 30s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  LockResult b_holds = from("c2", [&] { return b->acquire("b's", 30s); });
  ASSERT_EQ(b_holds.outcome, Outcome::kOk) << b_holds.error;
  EXPECT_EQ(raw_value("SELECT COUNT(*) FROM fencecheck.sessions WHERE client = 'c1' AND host LIKE '%:%'"), "1")
      << "the session registered itself with its host:port";

  auto admin = raw_connection();
  int killed = -1;
  std::string error;
  runtime_->run_in("c3", [&] { killed = kill_client_sessions(*admin, "c1", &error); });
  ASSERT_EQ(killed, 1) << error;

  LockResult taken;
  auto t0 = std::chrono::steady_clock::now();
  runtime_->run_in("c2", [&] {
    while (since(t0) < 3s) {
      taken = b->acquire("k", 30s);
      if (taken.outcome == Outcome::kOk) break;
      std::this_thread::sleep_for(10ms);
    }
  });
  ASSERT_EQ(taken.outcome, Outcome::kOk) << taken.error;
  std::cout << "[ measured ] named lock free " << since(t0).count() << " ms after KILL under " << GetParam() << "\n";
  LockResult late = from("c1", [&] { return a->release(*g.grant); });
  EXPECT_EQ(late.outcome, Outcome::kFail);
  EXPECT_EQ(late.error.rfind("not held: the session that took it has ended", 0), 0u) << late.error;
  LockResult refused = from("c1", [&] { return a->acquire("k", 30s); });
  EXPECT_EQ(refused.outcome, Outcome::kFail) << "b holds it now";
  EXPECT_EQ(refused.error, "lock held by another client");
  EXPECT_EQ(from("c2", [&] { return b->release(*b_holds.grant); }).outcome, Outcome::kOk)
      << "c2's session was not c1's to kill";
  runtime_->run_in("c3", [&] { killed = kill_client_sessions(*admin, "c9", &error); });
  EXPECT_EQ(killed, 0) << error;
}

// K7's mechanism: the server ends the holder's idle session and frees its lock.
TEST_P(MariadbClientTest, WaitTimeoutFreesANamedLockBehindItsHolder) {
  start_server({"lock=named", "wait_timeout_s=1"});
  auto a = client("c1");
  auto b = client("c2");
  LockResult g = from("c1", [&] { return a->acquire("k", 30s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  auto t0 = std::chrono::steady_clock::now();
  LockResult taken;
  runtime_->run_in("c2", [&] {
    while (since(t0) < 5s) {
      taken = b->acquire("k", 30s);
      if (taken.outcome == Outcome::kOk) break;
      std::this_thread::sleep_for(20ms);  // b's own session stays busier than wait_timeout
    }
  });
  Millis freed_after = since(t0);
  ASSERT_EQ(taken.outcome, Outcome::kOk) << taken.error;
  std::cout << "[ measured ] named lock freed " << freed_after.count()
            << " ms after its holder went idle (wait_timeout 1 s) under " << GetParam() << "\n";
  EXPECT_GE(freed_after, 900ms);
  EXPECT_LT(freed_after, 3000ms);
  LockResult late = from("c1", [&] { return a->release(*g.grant); });
  EXPECT_EQ(late.outcome, Outcome::kFail);
  EXPECT_EQ(late.error.rfind("not held: the session that took it has ended", 0), 0u) << late.error;
  LockResult reconnected = from("c1", [&] { return a->acquire("other", 30s); });
  EXPECT_EQ(reconnected.outcome, Outcome::kOk) << "a reconnects lazily: " << reconnected.error;
}

TEST_P(MariadbClientTest, EveryLeaseModeGrantsRefusesAndHandsOutIncreasingTokens) {
  start_server({"lock=lease"});
  for (const std::string& mode : kLeaseModes) {
    SCOPED_TRACE("lease=" + mode);
    auto a = lease_client("c1", mode);
    auto b = lease_client("c2", mode);
    const std::string key = "k-" + mode;
    LockResult g1 = from("c1", [&] { return a->acquire(key, 30s); });
    ASSERT_EQ(g1.outcome, Outcome::kOk) << g1.error;
    ASSERT_TRUE(g1.grant->token);
    EXPECT_GE(*g1.grant->token, 1);
    ASSERT_TRUE(g1.grant->promise);
    EXPECT_EQ(g1.grant->promise->to_json(), nlohmann::json({{"valid_ms", 30000}})) << "the lease is the ttl";

    LockResult refused = from("c2", [&] { return b->acquire(key, 30s); });
    EXPECT_EQ(refused.outcome, Outcome::kFail);
    EXPECT_FALSE(refused.not_sent);
    EXPECT_EQ(refused.error, "lock held by another client");
    Grant forged{key, g1.grant->token, "c2:1:0000000000000000"};
    EXPECT_EQ(from("c2", [&] { return b->release(forged); }).outcome, Outcome::kFail);
    LockResult other_key = from("c2", [&] { return b->acquire(key + "-other", 30s); });
    EXPECT_EQ(other_key.outcome, Outcome::kOk) << "locks are per key: " << other_key.error;

    EXPECT_EQ(from("c1", [&] { return a->release(*g1.grant); }).outcome, Outcome::kOk);
    LockResult twice = from("c1", [&] { return a->release(*g1.grant); });
    EXPECT_EQ(twice.outcome, Outcome::kFail);
    EXPECT_EQ(twice.error, "not held");

    std::int64_t last = *g1.grant->token;
    for (int i = 0; i < 3; ++i) {
      auto& c = i % 2 ? a : b;
      const char* node = i % 2 ? "c1" : "c2";
      LockResult g = from(node, [&] { return c->acquire(key, 30s); });
      ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
      EXPECT_GT(*g.grant->token, last) << "fencing tokens only go up";
      last = *g.grant->token;
      ASSERT_EQ(from(node, [&] { return c->release(*g.grant); }).outcome, Outcome::kOk);
    }
    EXPECT_EQ(raw_value("SELECT token FROM fencecheck.leases WHERE name = '" + key + "'"), std::to_string(last));
  }
}

TEST_P(MariadbClientTest, AnExpiredLeaseGoesToTheNextClientWithAHigherToken) {
  start_server({"lock=lease"});
  std::map<std::string, std::unique_ptr<LockClient>> as, bs;
  std::map<std::string, Grant> first;
  for (const std::string& mode : kLeaseModes) {
    SCOPED_TRACE("lease=" + mode);
    as[mode] = lease_client("c1", mode);
    bs[mode] = lease_client("c2", mode);
    LockResult g1 = from("c1", [&] { return as[mode]->acquire("k-" + mode, 300ms); });
    ASSERT_EQ(g1.outcome, Outcome::kOk) << g1.error;
    first[mode] = *g1.grant;
    EXPECT_EQ(from("c2", [&] { return bs[mode]->acquire("k-" + mode, 300ms); }).outcome, Outcome::kFail);
  }
  std::this_thread::sleep_for(400ms);  // every lease has expired on the server's clock
  for (const std::string& mode : kLeaseModes) {
    SCOPED_TRACE("lease=" + mode);
    LockResult g2 = from("c2", [&] { return bs[mode]->acquire("k-" + mode, 30s); });
    ASSERT_EQ(g2.outcome, Outcome::kOk) << g2.error;
    EXPECT_GT(*g2.grant->token, *first[mode].token);
    LockResult stale = from("c1", [&] { return as[mode]->release(first[mode]); });
    EXPECT_EQ(stale.outcome, Outcome::kFail) << "a stale grant releases nothing";
    EXPECT_EQ(stale.error, "not held");
    EXPECT_EQ(from("c2", [&] { return bs[mode]->release(*g2.grant); }).outcome, Outcome::kOk);
  }
}

// Two acquires that meet on an expired row: the test's own transaction holds the row's lock
// while both read it and wait to write it, then lets go. read-update's transactions both
// read the same token at REPEATABLE READ, and the second UPDATE overwrites the first's
// commit: two grants with one token, the lost update. FOR UPDATE makes the second read
// wait for the first's commit, and the conditional UPDATE re-checks the expiry on the row the
// first left: one grant.
TEST_P(MariadbClientTest, TwoAcquiresMeetingOnTheRowWinTwiceOnlyUnderReadUpdate) {
  start_server({"lock=lease"});
  auto holder = raw_connection();
  for (const std::string& mode : kLeaseModes) {
    SCOPED_TRACE("lease=" + mode);
    // Time enough to wait behind the row's lock on a loaded machine.
    auto a = lease_client("c1", mode, 3000);
    auto b = lease_client("c2", mode, 3000);
    const std::string key = "met-" + mode;
    // The row exists and is free (expired), with token 0.
    raw(*holder, "INSERT INTO fencecheck.leases VALUES ('" + key + "', '', '1000-01-01', 0)");
    raw(*holder, "START TRANSACTION");
    raw(*holder, "UPDATE fencecheck.leases SET owner = owner WHERE name = '" + key + "'");  // the row's X lock
    LockResult ra, rb;
    std::thread ta([&] { ra = from("c1", [&] { return a->acquire(key, 30s); }); });
    std::thread tb([&] { rb = from("c2", [&] { return b->acquire(key, 30s); }); });
    std::this_thread::sleep_for(300ms);  // both have read the row and wait
    raw(*holder, "ROLLBACK");
    ta.join();
    tb.join();
    int granted = (ra.outcome == Outcome::kOk) + (rb.outcome == Outcome::kOk);
    if (mode == "read-update") {
      ASSERT_EQ(granted, 2) << ra.error << " / " << rb.error;
      EXPECT_EQ(*ra.grant->token, 1);
      EXPECT_EQ(*rb.grant->token, 1) << "the lost update: two holders, one token";
    } else {
      EXPECT_EQ(granted, 1) << ra.error << " / " << rb.error;
      const LockResult& lost = ra.outcome == Outcome::kOk ? rb : ra;
      EXPECT_EQ(lost.outcome, Outcome::kFail);
      EXPECT_EQ(lost.error, "lock held by another client");
    }
  }
}

TEST_P(MariadbClientTest, UnderSnapshotIsolationTheSecondReadUpdateFails) {
  start_server({"lock=lease", "lease=read-update", "innodb_snapshot_isolation=ON"});
  auto holder = raw_connection();
  auto a = lease_client("c1", "read-update", 3000);
  auto b = lease_client("c2", "read-update", 3000);
  raw(*holder, "INSERT INTO fencecheck.leases VALUES ('k', '', '1000-01-01', 0)");
  raw(*holder, "START TRANSACTION");
  raw(*holder, "UPDATE fencecheck.leases SET owner = owner WHERE name = 'k'");
  LockResult ra, rb;
  std::thread ta([&] { ra = from("c1", [&] { return a->acquire("k", 30s); }); });
  std::thread tb([&] { rb = from("c2", [&] { return b->acquire("k", 30s); }); });
  std::this_thread::sleep_for(300ms);
  raw(*holder, "ROLLBACK");
  ta.join();
  tb.join();
  ASSERT_EQ((ra.outcome == Outcome::kOk) + (rb.outcome == Outcome::kOk), 1) << ra.error << " / " << rb.error;
  const LockResult& lost = ra.outcome == Outcome::kOk ? rb : ra;
  EXPECT_EQ(lost.outcome, Outcome::kFail);
  EXPECT_NE(lost.error.find("1020"), std::string::npos) << "record changed since the snapshot: " << lost.error;
  // The failed transaction was rolled back and its session lives on.
  auto& loser = ra.outcome == Outcome::kOk ? b : a;
  const char* node = ra.outcome == Outcome::kOk ? "c2" : "c1";
  EXPECT_EQ(from(node, [&] { return loser->acquire("k2", 30s); }).outcome, Outcome::kOk);
}

// A SIGSTOPped server answers nothing: the acquire gives up within the command timeout (500
// ms here) — kUnknown when the lock statement may run once the server resumes, kFail when it
// cannot (a transaction before its COMMIT), and a new session cannot even be made (kFail,
// nothing sent).
TEST_P(MariadbClientTest, APausedServerMakesAcquiresGiveUpInTime) {
  start_server({"lock=named"});
  struct Try {
    const char* what;
    std::string node;
    std::unique_ptr<LockClient> c;
    Outcome want;
    bool not_sent;
  };
  std::vector<Try> tries;
  tries.push_back({"named", "c1", client("c1"), Outcome::kUnknown, false});
  tries.push_back({"conditional", "c2", lease_client("c2", "conditional"), Outcome::kUnknown, false});
  tries.push_back({"read-update", "c3", lease_client("c3", "read-update"), Outcome::kFail, false});
  for (Try& t : tries) {  // each makes its session, and the conditional one its key's row
    LockResult warm = from(t.node, [&] { return t.c->acquire(std::string("k-") + t.what, 30s); });
    ASSERT_EQ(warm.outcome, Outcome::kOk) << t.what << ": " << warm.error;
    ASSERT_EQ(from(t.node, [&] { return t.c->release(*warm.grant); }).outcome, Outcome::kOk) << t.what;
  }
  tries.push_back({"a new session", "c1", client("c1"), Outcome::kFail, true});
  server_->pause("n1", test_deadline());
  for (Try& t : tries) {
    SCOPED_TRACE(t.what);
    auto t0 = std::chrono::steady_clock::now();
    LockResult r = from(t.node, [&] { return t.c->acquire(std::string("k-") + t.what, 30s); });
    Millis took = since(t0);
    EXPECT_EQ(r.outcome, t.want) << r.error;
    EXPECT_EQ(r.not_sent, t.not_sent) << r.error;
    EXPECT_LT(took, 500ms + 400ms) << r.error;
    EXPECT_GE(took, 450ms) << r.error;
  }
  server_->resume("n1", test_deadline());
  // The sessions were dropped: the next acquire reconnects (once the server keeps up again).
  LockResult after;
  auto t0 = std::chrono::steady_clock::now();
  runtime_->run_in("c3", [&] {
    while ((after = tries[2].c->acquire("after", 30s)).outcome != Outcome::kOk && since(t0) < 5s) {
      std::this_thread::sleep_for(50ms);
    }
  });
  EXPECT_EQ(after.outcome, Outcome::kOk) << after.error;
}

TEST_P(MariadbClientTest, NoServerIsADefiniteFailNothingSent) {
  start_server();
  // Port 1 (tcpmux) is served nowhere: the connect is refused at once.
  for (const char* lock : {"named", "lease"}) {
    auto a = client("c1", [&](nlohmann::json& c) {
      c["servers"][0]["port"] = 1;
      c["lock"] = lock;
    });
    auto t0 = std::chrono::steady_clock::now();
    LockResult r = from("c1", [&] { return a->acquire("k", 1s); });
    EXPECT_EQ(r.outcome, Outcome::kFail) << lock;
    EXPECT_TRUE(r.not_sent) << lock << ": " << r.error;
    EXPECT_NE(r.error.find("cannot connect"), std::string::npos) << r.error;
    EXPECT_LT(since(t0), 500ms);
  }
}

// A three-node Galera cluster, each client on its own node's server (c1 on n1, c2 on n2, c3
// on n3). A conditional lease taken on one node is refused on the others — "held" once the
// node has applied the holder's commit, or Galera's certification failure (1213) before —
// and tokens go up across nodes. GET_LOCK is not replicated: each node grants the same name.
TEST_P(MariadbClientTest, GaleraLeasesAreClusterWideAndTokensGoUpAcrossNodes) {
  // ~10 s of setup per cluster; nothing here depends on the runtime.
  if (GetParam() != "local") GTEST_SKIP() << "one runtime is enough";
  Millis setup = start_server({"cluster=galera", "lock=lease"});
  std::cout << "[ measured ] galera setup " << setup.count() << " ms\n";
  std::vector<std::unique_ptr<LockClient>> clients;
  const std::vector<std::string> nodes = {"c1", "c2", "c3"};
  for (const std::string& n : nodes) clients.push_back(client(n));
  std::int64_t last = 0;
  for (int round = 0; round < 3; ++round) {
    const std::size_t holder = static_cast<std::size_t>(round) % 3;
    // The last holder's release committed on its own node; another node applies it a little
    // later (Galera applies asynchronously, seen once in CI at a load of 6): until then it
    // still sees the lease held, so the next holder tries for up to 5 s.
    LockResult g;
    for (int tries = 0; tries < 50; ++tries) {
      g = from(nodes[holder], [&] { return clients[holder]->acquire("k", 30s); });
      if (g.outcome == Outcome::kOk) break;
      std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(g.outcome, Outcome::kOk) << nodes[holder] << ": " << g.error;
    EXPECT_GT(*g.grant->token, last) << "tokens go up across nodes";
    last = *g.grant->token;
    for (std::size_t other = 0; other < 3; ++other) {
      if (other == holder) continue;
      LockResult refused = from(nodes[other], [&] { return clients[other]->acquire("k", 30s); });
      EXPECT_EQ(refused.outcome, Outcome::kFail) << nodes[other] << ": " << refused.error;
    }
    ASSERT_EQ(from(nodes[holder], [&] { return clients[holder]->release(*g.grant); }).outcome, Outcome::kOk);
  }

  auto named_a = client("c1", [](nlohmann::json& c) { c["lock"] = "named"; });
  auto named_b = client("c2", [](nlohmann::json& c) { c["lock"] = "named"; });
  LockResult na = from("c1", [&] { return named_a->acquire("n", 30s); });
  EXPECT_EQ(na.outcome, Outcome::kOk) << na.error;
  LockResult nb = from("c2", [&] { return named_b->acquire("n", 30s); });
  EXPECT_EQ(nb.outcome, Outcome::kOk) << "MariaDB 10.11: GET_LOCK is the node's own, two holders: " << nb.error;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, MariadbClientTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
