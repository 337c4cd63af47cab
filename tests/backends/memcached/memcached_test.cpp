// The memcached backend on a real memcached under each runtime ("local", and "netns" when
// root): the server's life (a restart loses every key), the client's add / compare-and-delete
// locks and their promise, and press_memory, the memory-pressure fault's mechanism, with
// evict=on (a held lock is evicted) and evict=off (memcached refuses instead).
#include <gtest/gtest.h>

#include <thread>

#include "backends/memcached/memcached_lock_client.h"
#include "tests/backends/server_fixture.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

class MemcachedTest : public BackendServerTest {
 protected:
  MemcachedTest() : BackendServerTest("memcached", {"n1", "c1", "c2"}) {}
};

TEST_P(MemcachedTest, StartsAnswersAndARestartLosesAHeldKey) {
  start_server({"memory_mb=16"});
  EXPECT_EQ(server_->nodes(), std::vector<std::string>{"n1"});
  nlohmann::json cfg = server_->client_config();
  EXPECT_EQ(cfg["host"], runtime_->node("n1").address);
  EXPECT_EQ(cfg["port"], runtime_->port("n1", "memcached", 11211));
  EXPECT_EQ(server_->log_files("n1"), std::vector<std::filesystem::path>{nodes_dir() / "n1" / "memcached.log"});
  auto c1 = client("c1");
  auto c2 = client("c2");
  LockResult held = from("c1", [&] { return c1->acquire("l1", 30s); });
  ASSERT_EQ(held.outcome, Outcome::kOk) << held.error;

  server_->kill("n1", test_deadline());
  EXPECT_FALSE(server_->running("n1"));
  LockResult down = from("c2", [&] { return c2->acquire("l1", 30s); });
  EXPECT_NE(down.outcome, Outcome::kOk) << "no server, no lock";
  server_->start("n1");
  LockResult after = from("c2", [&] { return c2->acquire("l1", 30s); });
  ASSERT_EQ(after.outcome, Outcome::kOk) << "the restart lost c1's key: " << after.error;
  EXPECT_EQ(from("c1", [&] { return c1->release(*held.grant); }).outcome, Outcome::kFail)
      << "c1's grant is gone with the restart";

  server_->stop("n1", test_deadline());
  EXPECT_TRUE(server_->processes("n1").empty());
}

TEST_P(MemcachedTest, AcquireRefusesAHeldKeyAndReleaseFreesIt) {
  start_server();
  auto c1 = client("c1");
  auto c2 = client("c2");
  LockResult g = from("c1", [&] { return c1->acquire("l1", 2500ms); });
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  EXPECT_FALSE(g.grant->token.has_value()) << "a CAS is no fencing token";
  EXPECT_TRUE(g.grant->detail.at("cas").is_number_integer());
  EXPECT_EQ(g.grant->detail.at("ttl_s"), 3) << "2.5 s rounds up to T3";
  ASSERT_TRUE(g.grant->promise.has_value());
  EXPECT_EQ(g.grant->promise->valid_ms, 3000 - 1000 - kMemcachedTickJitter.count());

  LockResult refused = from("c2", [&] { return c2->acquire("l1", 2500ms); });
  EXPECT_EQ(refused.outcome, Outcome::kFail);
  EXPECT_EQ(refused.error, "lock held by another client");
  EXPECT_FALSE(refused.not_sent);

  EXPECT_EQ(from("c1", [&] { return c1->release(*g.grant); }).outcome, Outcome::kOk);
  EXPECT_EQ(from("c1", [&] { return c1->release(*g.grant); }).outcome, Outcome::kFail) << "released twice";
  EXPECT_EQ(from("c2", [&] { return c2->acquire("l1", 2500ms); }).outcome, Outcome::kOk);
}

// The stale holder's compare-and-delete: c1's key expires, c2 takes the lock, c1's release
// (by its own CAS) is refused and c2's item stays.
TEST_P(MemcachedTest, AStaleReleaseCannotDeleteTheNextHoldersKey) {
  start_server();
  auto c1 = client("c1");
  auto c2 = client("c2");
  LockResult stale = from("c1", [&] { return c1->acquire("l1", 1000ms); });
  ASSERT_EQ(stale.outcome, Outcome::kOk) << stale.error;
  LockResult next;
  const auto t0 = std::chrono::steady_clock::now();
  do {
    std::this_thread::sleep_for(50ms);
    next = from("c2", [&] { return c2->acquire("l1", 30s); });
  } while (next.outcome != Outcome::kOk && since(t0) < 3s);
  ASSERT_EQ(next.outcome, Outcome::kOk) << "T1 expired within a second or so: " << next.error;
  std::cout << "[ measured ] a T1 item was taken again " << since(t0).count() << " ms after the first grant\n";

  LockResult late = from("c1", [&] { return c1->release(*stale.grant); });
  EXPECT_EQ(late.outcome, Outcome::kFail);
  EXPECT_EQ(late.error, "not held: the key holds another grant (another owner or cas)");
  EXPECT_EQ(from("c1", [&] { return c1->acquire("l1", 30s); }).outcome, Outcome::kFail) << "c2's item stayed";
  EXPECT_EQ(from("c2", [&] { return c2->release(*next.grant); }).outcome, Outcome::kOk);
}

TEST_P(MemcachedTest, NoServerIsADefiniteFailNothingSent) {
  start_server();
  auto c1 = client("c1");
  server_->stop("n1", test_deadline());
  LockResult r = from("c1", [&] { return c1->acquire("l1", 2s); });
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_TRUE(r.not_sent) << r.error;
}

TEST_P(MemcachedTest, APausedServerGivesUnknownWithinTheCommandTimeout) {
  start_server();
  auto c1 = client("c1");
  ASSERT_EQ(from("c1", [&] { return c1->acquire("warm", 2s); }).outcome, Outcome::kOk);
  server_->pause("n1", test_deadline());
  const auto t0 = std::chrono::steady_clock::now();
  LockResult r = from("c1", [&] { return c1->acquire("l1", 2s); });
  const Millis took = since(t0);
  server_->resume("n1", test_deadline());
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.error;
  EXPECT_LT(took, 1500ms) << "the fixture's command timeout is 500 ms";
}

// memory-pressure's mechanism with evict=on: the filler pushes a held lock's item out.
TEST_P(MemcachedTest, PressMemoryEvictsAHeldLock) {
  start_server({"memory_mb=4"});
  auto c1 = client("c1");
  auto c2 = client("c2");
  LockResult held = from("c1", [&] { return c1->acquire("l1", 60s); });
  ASSERT_EQ(held.outcome, Outcome::kOk) << held.error;
  const auto t0 = std::chrono::steady_clock::now();
  MemoryPressure p = server_->press_memory("n1", Deadline::after(2000ms));
  std::cout << "[ measured ] 2 s of filler into 4 MB: " << p.stored << " stored, " << p.refused << " refused, "
            << p.evictions.value_or(-1) << " evictions, in " << since(t0).count() << " ms\n";
  EXPECT_TRUE(p.error.empty()) << p.error;
  EXPECT_GT(p.stored, 0);
  EXPECT_EQ(p.refused, 0);
  ASSERT_TRUE(p.evictions.has_value());
  EXPECT_GT(*p.evictions, 0);
  LockResult taken = from("c2", [&] { return c2->acquire("l1", 60s); });
  EXPECT_EQ(taken.outcome, Outcome::kOk) << "c1's item was evicted 58 s before its TTL: " << taken.error;
  LockResult late = from("c1", [&] { return c1->release(*held.grant); });
  EXPECT_EQ(late.outcome, Outcome::kFail) << "c1 no longer holds it";
}

// evict=off (-M): memcached answers SERVER_ERROR out of memory instead of evicting, so a
// new acquire is refused with the error and the held item stays — until a contending
// acquire of the held key fails so too: memcached 1.6.18's meta set unlinks the existing
// item when it cannot allocate the new one, in every mode, add included (the classic `add`
// command keeps it), so the next acquire is granted while the first holder still holds.
TEST_P(MemcachedTest, WithEvictOffAFullCacheRefusesAndAFailedAddDeletesTheHeldItem) {
  start_server({"memory_mb=4", "evict=off"});
  auto c1 = client("c1");
  auto c2 = client("c2");
  LockResult held = from("c1", [&] { return c1->acquire("l1", 60s); });
  ASSERT_EQ(held.outcome, Outcome::kOk) << held.error;
  MemoryPressure p = server_->press_memory("n1", Deadline::after(1500ms));
  std::cout << "[ measured ] 1.5 s of filler into 4 MB with -M: " << p.stored << " stored, " << p.refused
            << " refused, " << p.evictions.value_or(-1) << " evictions\n";
  EXPECT_GT(p.refused, 0);
  EXPECT_EQ(p.evictions, 0);
  const nlohmann::json cfg = server_->client_config();
  auto item_of_l1 = [&] {
    std::string value;
    runtime_->run_in("c1", [&] {
      MemcachedConnection conn(cfg["host"], cfg["port"], 500ms, 500ms);
      if (conn.request("mg l1 v\r\n", &value).line == "EN") value = "(none)";
    });
    return value;
  };
  EXPECT_EQ(item_of_l1(), held.grant->owner) << "nothing evicted";
  LockResult other = from("c2", [&] { return c2->acquire("l2", 60s); });
  EXPECT_EQ(other.outcome, Outcome::kFail);
  EXPECT_NE(other.error.find("SERVER_ERROR out of memory"), std::string::npos) << other.error;
  EXPECT_EQ(item_of_l1(), held.grant->owner) << "another key's failed add leaves l1 alone";

  LockResult contending = from("c2", [&] { return c2->acquire("l1", 60s); });
  EXPECT_EQ(contending.outcome, Outcome::kFail);
  EXPECT_NE(contending.error.find("SERVER_ERROR out of memory"), std::string::npos) << contending.error;
  EXPECT_EQ(item_of_l1(), "(none)") << "the failed add of the held key deleted c1's item";
  // Granted once memory frees (the filler's items expire a few seconds after the fill).
  LockResult second;
  const auto t0 = std::chrono::steady_clock::now();
  do {
    second = from("c2", [&] { return c2->acquire("l1", 60s); });
  } while (second.outcome != Outcome::kOk && since(t0) < 6s && (std::this_thread::sleep_for(100ms), true));
  EXPECT_EQ(second.outcome, Outcome::kOk) << "c2 holds l1 while c1's grant has 50-odd s to go: " << second.error;
  EXPECT_EQ(from("c1", [&] { return c1->release(*held.grant); }).outcome, Outcome::kFail);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, MemcachedTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
