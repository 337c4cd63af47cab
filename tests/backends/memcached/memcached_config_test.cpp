// The memcached backend without a server: its options, its client config, the TTL it asks
// and the promise it makes, and the capability its evict option withholds.
#include <gtest/gtest.h>

#include "backends/memcached/memcached_lock_client.h"
#include "backends/memcached/memcached_server.h"
#include "backends/registry.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

TEST(MemcachedConfig, TtlRoundsUpToWholeSecondsAndThePromiseLosesATick) {
  EXPECT_EQ(memcached_ttl_seconds(1ms), 1);
  EXPECT_EQ(memcached_ttl_seconds(1000ms), 1);
  EXPECT_EQ(memcached_ttl_seconds(1001ms), 2);
  EXPECT_EQ(memcached_ttl_seconds(3000ms), 3);
  EXPECT_EQ(memcached_promise(1000ms), 0ms) << "T1 may go at once after a tick: it promises nothing";
  EXPECT_EQ(memcached_promise(2000ms), 1000ms - kMemcachedTickJitter);
  EXPECT_EQ(memcached_promise(2500ms), 2000ms - kMemcachedTickJitter);
}

TEST(MemcachedConfig, OptionsAreValidatedAndNamed) {
  const BackendInfo& b = *find_backend("memcached");
  BackendOptions defaults = resolve_backend_options(b, {});
  EXPECT_EQ(defaults, (BackendOptions{{"evict", "on"}, {"memory_mb", "64"}}));
  MemcachedServerOptions o = MemcachedServerOptions::from_options(resolve_backend_options(b, {"memory_mb=8", "evict=off"}));
  EXPECT_EQ(o.memory_mb, 8);
  EXPECT_FALSE(o.evict);
  for (const char* bad : {"memory_mb=1", "memory_mb=lots", "memory_mb=99999999"}) {
    try {
      MemcachedServerOptions::from_options(resolve_backend_options(b, {bad}));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("memcached option memory_mb must be a whole number in 2..65536"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(resolve_backend_options(b, {"evict=maybe"}), std::invalid_argument);
}

TEST(MemcachedConfig, ClientConfigRoundTripsAndNamesABadField) {
  MemcachedClientConfig c = MemcachedClientConfig::from_json({{"host", "10.0.0.1"}, {"port", 11211}});
  EXPECT_EQ(c.host, "10.0.0.1");
  EXPECT_EQ(MemcachedClientConfig::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_THROW(MemcachedClientConfig::from_json({{"port", 11211}}), std::invalid_argument);
  try {
    MemcachedClientConfig::from_json({{"host", "h"}, {"port", 0}});
    ADD_FAILURE() << "port 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"port\""), std::string::npos) << e.what();
  }
}

TEST(MemcachedConfig, EvictOffWithholdsEvictsKeys) {
  const BackendInfo& b = *find_backend("memcached");
  EXPECT_TRUE(backend_offers(b, resolve_backend_options(b, {})).has(Capability::kEvictsKeys));
  const BackendOptions off = resolve_backend_options(b, {"evict=off"});
  EXPECT_FALSE(backend_offers(b, off).has(Capability::kEvictsKeys));
  EXPECT_EQ(reason_for(backend_reasons(b, off), Capability::kEvictsKeys),
            "evict=off is -M: memcached refuses to evict; the fault would only fill the cache");
  const BackendInfo& redis = *find_backend("redis");
  EXPECT_EQ(backend_offers(redis, resolve_backend_options(redis, {})), redis.offers) << "no withheld: as declared";
}

TEST(MemcachedConfig, AnAcquireOfABadKeyIsRefusedUnsent) {
  MemcachedLockClient client(MemcachedClientConfig::from_json({{"host", "127.0.0.1"}, {"port", 1}}), "c1");
  LockResult r = client.acquire("two words", 1s);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_TRUE(r.not_sent);
}

}  // namespace
}  // namespace fencecheck
