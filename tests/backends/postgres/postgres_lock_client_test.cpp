// The postgres lock clients against a real server under each runtime: both lock kinds'
// grants and refusals, lease tokens that only go up, lease expiry on the server's clock, and
// an advisory lock freed behind its holder's back when idle_session_timeout ends the session
// or the server kills it (kill_sessions).
#include "backends/postgres/postgres_lock_client.h"

#include <gtest/gtest.h>

#include <iostream>
#include <thread>

#include "tests/backends/postgres/postgres_fixture.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

using PostgresClientTest = PostgresTest;

TEST_P(PostgresClientTest, LeaseGrantsRefusalsAndIncreasingTokens) {
  start_server({"lock=lease"});
  auto a = client("c1");
  auto b = client("c2");
  LockResult g1 = from("c1", [&] { return a->acquire("k", 30s); });
  ASSERT_EQ(g1.outcome, Outcome::kOk) << g1.error;
  ASSERT_TRUE(g1.grant->token);
  ASSERT_TRUE(g1.grant->promise);
  EXPECT_EQ(g1.grant->promise->to_json(), nlohmann::json({{"valid_ms", 30000}})) << "the lease is the ttl";

  LockResult refused = from("c2", [&] { return b->acquire("k", 30s); });
  EXPECT_EQ(refused.outcome, Outcome::kFail);
  EXPECT_FALSE(refused.not_sent);
  EXPECT_EQ(refused.error, "lock held by another client");
  // b cannot release a's lease: neither as itself nor with a's token under another holder.
  Grant forged{"k", g1.grant->token, "c2:1:0000000000000000"};
  EXPECT_EQ(from("c2", [&] { return b->release(forged); }).outcome, Outcome::kFail);
  LockResult other_key = from("c2", [&] { return b->acquire("other", 30s); });
  EXPECT_EQ(other_key.outcome, Outcome::kOk) << "locks are per key: " << other_key.error;

  EXPECT_EQ(from("c1", [&] { return a->release(*g1.grant); }).outcome, Outcome::kOk);
  LockResult twice = from("c1", [&] { return a->release(*g1.grant); });
  EXPECT_EQ(twice.outcome, Outcome::kFail);
  EXPECT_EQ(twice.error, "not held");

  std::int64_t last = *g1.grant->token;
  for (int i = 0; i < 3; ++i) {
    auto& c = i % 2 ? a : b;
    const char* node = i % 2 ? "c1" : "c2";
    LockResult g = from(node, [&] { return c->acquire("k", 30s); });
    ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
    EXPECT_GT(*g.grant->token, last) << "fencing tokens only go up";
    last = *g.grant->token;
    ASSERT_EQ(from(node, [&] { return c->release(*g.grant); }).outcome, Outcome::kOk);
  }
}

TEST_P(PostgresClientTest, AnExpiredLeaseGoesToTheNextClientWithAHigherToken) {
  start_server();
  auto a = client("c1");
  auto b = client("c2");
  LockResult g1 = from("c1", [&] { return a->acquire("k", 300ms); });
  ASSERT_EQ(g1.outcome, Outcome::kOk) << g1.error;
  EXPECT_EQ(from("c2", [&] { return b->acquire("k", 300ms); }).outcome, Outcome::kFail);
  std::this_thread::sleep_for(400ms);
  LockResult g2 = from("c2", [&] { return b->acquire("k", 30s); });
  ASSERT_EQ(g2.outcome, Outcome::kOk) << g2.error;
  EXPECT_GT(*g2.grant->token, *g1.grant->token);
  LockResult stale = from("c1", [&] { return a->release(*g1.grant); });
  EXPECT_EQ(stale.outcome, Outcome::kFail) << "a stale grant releases nothing";
  EXPECT_EQ(from("c2", [&] { return b->release(*g2.grant); }).outcome, Outcome::kOk);
}

TEST_P(PostgresClientTest, AdvisoryLocksAreExclusiveAndNotReentrant) {
  start_server({"lock=advisory"});
  auto a = client("c1");
  auto b = client("c2");
  LockResult g = from("c1", [&] { return a->acquire("k", 30s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  EXPECT_FALSE(g.grant->token) << "advisory locks have no fencing token";
  ASSERT_TRUE(g.grant->promise);
  EXPECT_EQ(g.grant->promise->to_json(), nlohmann::json({{"valid_ms", nullptr}, {"bound", "connection"}}));
  LockResult again = from("c1", [&] { return a->acquire("k", 30s); });
  EXPECT_EQ(again.outcome, Outcome::kFail) << "PostgreSQL would say yes; the contract says no";
  LockResult refused = from("c2", [&] { return b->acquire("k", 30s); });
  EXPECT_EQ(refused.outcome, Outcome::kFail);
  EXPECT_EQ(refused.error, "lock held by another session");
  EXPECT_EQ(from("c2", [&] { return b->release(Grant{"k", std::nullopt, "c2:9:x"}); }).outcome, Outcome::kFail);

  EXPECT_EQ(from("c1", [&] { return a->release(*g.grant); }).outcome, Outcome::kOk);
  EXPECT_EQ(from("c1", [&] { return a->release(*g.grant); }).outcome, Outcome::kFail);
  LockResult next = from("c2", [&] { return b->acquire("k", 30s); });
  EXPECT_EQ(next.outcome, Outcome::kOk) << next.error;
}

// K7's mechanism: the server ends the holder's idle session and frees its lock; the holder
// finds out only when it next talks to the server.
TEST_P(PostgresClientTest, IdleSessionTimeoutFreesAnAdvisoryLockBehindItsHolder) {
  start_server({"lock=advisory", "idle_session_timeout_ms=500"});
  auto a = client("c1");
  auto b = client("c2", [](nlohmann::json& c) { c["idle_session_timeout_ms"] = 0; });
  LockResult g = from("c1", [&] { return a->acquire("k", 30s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  auto t0 = std::chrono::steady_clock::now();
  LockResult taken;
  runtime_->run_in("c2", [&] {
    while (since(t0) < 5s) {
      taken = b->acquire("k", 30s);
      if (taken.outcome == Outcome::kOk) break;
      std::this_thread::sleep_for(10ms);
    }
  });
  Millis freed_after = since(t0);
  ASSERT_EQ(taken.outcome, Outcome::kOk) << taken.error;
  std::cout << "[ measured ] advisory lock freed " << freed_after.count()
            << " ms after its holder went idle (idle_session_timeout 500 ms) under " << GetParam() << "\n";
  EXPECT_GE(freed_after, 400ms);
  EXPECT_LT(freed_after, 2000ms);
  LockResult late = from("c1", [&] { return a->release(*g.grant); });
  EXPECT_EQ(late.outcome, Outcome::kFail);
  EXPECT_EQ(late.error.rfind("not held: the session that took it has ended", 0), 0u) << late.error;
  LockResult reconnected = from("c1", [&] { return a->acquire("other", 30s); });
  EXPECT_EQ(reconnected.outcome, Outcome::kOk) << "a reconnects lazily: " << reconnected.error;
}

// kill-session's mechanism: the server ends the holder's session (kill_sessions, as an
// operator's pg_terminate_backend) and its advisory lock is free within milliseconds; the
// holder finds out only at its next statement.
TEST_P(PostgresClientTest, KilledSessionFreesAnAdvisoryLockBehindItsHolder) {
  start_server({"lock=advisory"});
  auto a = client("c1");
  auto b = client("c2");
  LockResult g = from("c1", [&] { return a->acquire("k", 30s); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  ASSERT_EQ(from("c2", [&] { return b->acquire("k", 30s); }).outcome, Outcome::kFail) << "c1 holds it";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(server_->kill_sessions("c1", test_deadline()), 1) << "c1's one session; c2's stays";
  Millis killed_in = since(t0);
  LockResult taken;
  runtime_->run_in("c2", [&] {
    while (since(t0) < 2s) {
      taken = b->acquire("k", 30s);
      if (taken.outcome == Outcome::kOk) break;
      std::this_thread::sleep_for(2ms);
    }
  });
  Millis freed_after = since(t0);
  ASSERT_EQ(taken.outcome, Outcome::kOk) << "c2's own session survived the kill: " << taken.error;
  std::cout << "[ measured ] kill_sessions took " << killed_in.count() << " ms; the lock was c2's "
            << freed_after.count() << " ms after it began, under " << GetParam() << "\n";
  EXPECT_LT(freed_after, 1000ms);
  LockResult late = from("c1", [&] { return a->release(*g.grant); });
  EXPECT_EQ(late.outcome, Outcome::kFail);
  EXPECT_EQ(late.error.rfind("not held: the session that took it has ended", 0), 0u) << late.error;
  EXPECT_EQ(server_->kill_sessions("c3", test_deadline()), 0) << "c3 never connected";
  EXPECT_EQ(server_->kill_sessions("c1", test_deadline()), 1) << "c1 reconnected for its release";
}

TEST_P(PostgresClientTest, NoServerIsADefiniteFailNothingSent) {
  start_server();
  // Port 1 (tcpmux) is served nowhere: the connect is refused at once.
  auto a = client("c1", [](nlohmann::json& c) { c["port"] = 1; });
  auto t0 = std::chrono::steady_clock::now();
  LockResult r = from("c1", [&] { return a->acquire("k", 1s); });
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_TRUE(r.not_sent) << r.error;
  EXPECT_LT(since(t0), 1000ms);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PostgresClientTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
