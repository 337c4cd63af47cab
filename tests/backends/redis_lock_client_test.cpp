// RedisLockClient against a real redis-server on 127.0.0.1.
#include "backends/redis/redis_lock_client.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <thread>

#include "tests/backends/local_processes.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;
using testing::RedisProcess;

class RedisLockClientTest : public ::testing::Test {
 protected:
  RedisClientConfig config(std::chrono::milliseconds command_timeout = 500ms) const {
    RedisClientConfig c;
    c.host = "127.0.0.1";
    c.port = redis_.port();
    c.connect_timeout = 300ms;
    c.command_timeout = command_timeout;
    return c;
  }
  RedisProcess redis_;
};

TEST_F(RedisLockClientTest, ExclusionOwnershipAndIncreasingTokens) {
  RedisLockClient a(config(), "c1"), b(config(), "c2");
  LockResult ga = a.acquire("k", 10s);
  ASSERT_EQ(ga.outcome, Outcome::kOk) << ga.error;
  ASSERT_TRUE(ga.grant && ga.grant->token);
  EXPECT_EQ(ga.grant->key, "k");
  ASSERT_TRUE(ga.grant->promise);
  EXPECT_EQ(ga.grant->promise->to_json(), nlohmann::json({{"valid_ms", 9999}}))
      << "the lease PX gave, less the 1 ms Redis rounds an expiry to";

  LockResult gb = b.acquire("k", 10s);
  EXPECT_EQ(gb.outcome, Outcome::kFail);
  EXPECT_FALSE(gb.grant);
  EXPECT_EQ(gb.error, "lock held by another client");

  // b pretends to hold a's lock with its own owner value: refused.
  Grant forged{"k", ga.grant->token, "c2:1:0000000000000000"};
  LockResult rb = b.release(forged);
  EXPECT_EQ(rb.outcome, Outcome::kFail);
  EXPECT_EQ(rb.error, "not held");

  EXPECT_EQ(a.release(*ga.grant).outcome, Outcome::kOk);
  EXPECT_EQ(a.release(*ga.grant).outcome, Outcome::kFail) << "released twice";

  LockResult gb2 = b.acquire("k", 10s);
  ASSERT_EQ(gb2.outcome, Outcome::kOk) << gb2.error;
  EXPECT_GT(*gb2.grant->token, *ga.grant->token);
  EXPECT_NE(gb2.grant->owner, ga.grant->owner);
}

TEST_F(RedisLockClientTest, TokensStrictlyIncreaseAcrossGrantsAndKeysAreIndependent) {
  RedisLockClient a(config(), "c1"), b(config(), "c2");
  std::int64_t last = 0;
  for (int i = 0; i < 50; ++i) {
    RedisLockClient& who = i % 2 ? a : b;
    LockResult g = who.acquire("k", 10s);
    ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
    EXPECT_GT(*g.grant->token, last);
    last = *g.grant->token;
    ASSERT_EQ(who.release(*g.grant).outcome, Outcome::kOk);
  }
  LockResult other = a.acquire("other-key", 10s);
  ASSERT_EQ(other.outcome, Outcome::kOk);
  EXPECT_EQ(*other.grant->token, 1);
}

TEST_F(RedisLockClientTest, ExpiredLeaseCanBeTakenWithAHigherToken) {
  RedisLockClient a(config(), "c1"), b(config(), "c2");
  LockResult ga = a.acquire("k", 100ms);
  ASSERT_EQ(ga.outcome, Outcome::kOk);
  std::this_thread::sleep_for(250ms);
  LockResult gb = b.acquire("k", 10s);
  ASSERT_EQ(gb.outcome, Outcome::kOk) << gb.error;
  EXPECT_GT(*gb.grant->token, *ga.grant->token);
  // The old holder's lease is gone: its release must not delete b's lock.
  EXPECT_EQ(a.release(*ga.grant).outcome, Outcome::kFail);
  EXPECT_EQ(a.acquire("k", 10s).outcome, Outcome::kFail);
}

TEST_F(RedisLockClientTest, PausedServerGivesUnknownWithinCommandTimeout) {
  RedisLockClient a(config(300ms), "c1");
  ASSERT_EQ(a.acquire("warm", 10s).outcome, Outcome::kOk);  // connection established
  ASSERT_TRUE(redis_.process().pause(test_deadline()));
  auto start = std::chrono::steady_clock::now();
  LockResult r = a.acquire("k", 10s);
  auto took = std::chrono::steady_clock::now() - start;
  redis_.process().resume(test_deadline());
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.error;
  EXPECT_NE(r.error.find("timeout"), std::string::npos) << r.error;
  EXPECT_LT(took, 300ms + 200ms);
  // The client reconnects lazily; the acquire sent during the pause did run on resume.
  LockResult again = a.acquire("k", 10s);
  EXPECT_EQ(again.outcome, Outcome::kFail) << "the unknown acquire took effect after SIGCONT";
}

TEST_F(RedisLockClientTest, NoServerIsADefiniteFailure) {
  RedisClientConfig c = config();
  c.port = free_loopback_port();
  RedisLockClient a(c, "c1");
  LockResult r = a.acquire("k", 1s);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.error.find("cannot connect"), std::string::npos) << r.error;
}

TEST_F(RedisLockClientTest, NonPositiveTtlIsRefusedWithoutSending) {
  RedisLockClient a(config(), "c1");
  EXPECT_EQ(a.acquire("k", 0ms).outcome, Outcome::kFail);
  EXPECT_EQ(a.acquire("k", 10s).outcome, Outcome::kOk);
}

}  // namespace
}  // namespace fencecheck
