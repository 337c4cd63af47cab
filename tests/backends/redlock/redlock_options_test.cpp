// The redlock backend without servers: registry entry, options, client config, the
// algorithm's constants, and an acquire that reaches nothing.
#include <gtest/gtest.h>

#include <stdexcept>

#include "backends/redlock/redlock_backend.h"
#include "platform/tcp.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

TEST(RedlockBackend, RegisteredWithFiveMastersByDefault) {
  const BackendInfo* b = find_backend("redlock");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->server_nodes, (std::vector<std::string>{"n1", "n2", "n3", "n4", "n5"}));
  ASSERT_EQ(b->binaries.size(), 1u);
  EXPECT_EQ(b->binaries[0].program, "redis-server");
  EXPECT_EQ(resolve_backend_options(*b, {}),
            (BackendOptions{{"n", "5"},
                            {"persistence", "none"},
                            {"validity_check", "on"},
                            {"instance_timeout_ms", "auto"},
                            {"stall_after_send_ms", "0"},
                            {"stall_every", "1"}}));
  EXPECT_EQ(b->make_server(resolve_backend_options(*b, {}))->nodes(), b->server_nodes);
  EXPECT_EQ(b->make_server(resolve_backend_options(*b, {"n=3"}))->nodes(),
            (std::vector<std::string>{"n1", "n2", "n3"}));
}

TEST(RedlockBackend, RefusesBadOptionValues) {
  const BackendInfo& b = *find_backend("redlock");
  EXPECT_THROW(resolve_backend_options(b, {"n=4"}), std::invalid_argument);
  EXPECT_THROW(resolve_backend_options(b, {"validity_check=maybe"}), std::invalid_argument);
  EXPECT_THROW(resolve_backend_options(b, {"persistence=sometimes"}), std::invalid_argument);
  for (const std::string bad : {"stall_after_send_ms=-1", "stall_after_send_ms=1.5", "stall_every=0",
                                "instance_timeout_ms=0", "instance_timeout_ms=fast"}) {
    EXPECT_THROW(b.make_server(resolve_backend_options(b, {bad})), std::invalid_argument) << bad;
  }
}

TEST(RedlockClientConfig, CarriesTheOptionsAndRoundTrips) {
  BackendOptions opts = resolve_backend_options(
      *find_backend("redlock"),
      {"validity_check=off", "instance_timeout_ms=25", "stall_after_send_ms=1500", "stall_every=3"});
  RedlockClientConfig c = RedlockClientConfig::from_options(opts);
  EXPECT_FALSE(c.validity_check);
  EXPECT_EQ(c.instance_timeout, 25ms);
  EXPECT_EQ(c.stall_after_send, 1500ms);
  EXPECT_EQ(c.stall_every, 3);
  c.instances = {{"10.0.0.1", 6379}, {"10.0.0.2", 6380}, {"10.0.0.3", 6381}};
  RedlockClientConfig back = RedlockClientConfig::from_json(c.to_json());
  EXPECT_EQ(back.to_json(), c.to_json());
  EXPECT_EQ(back.instances[1].port, 6380);

  RedlockClientConfig defaults = RedlockClientConfig::from_json({{"instances", {{{"host", "10.0.0.1"}, {"port", 1}}}}});
  EXPECT_TRUE(defaults.validity_check);
  EXPECT_EQ(defaults.instance_timeout, std::nullopt);
  EXPECT_EQ(defaults.to_json()["instance_timeout_ms"], nullptr);
}

TEST(RedlockClientConfig, RejectsMalformedConfigs) {
  nlohmann::json one = {{"host", "10.0.0.1"}, {"port", 6379}};
  for (const nlohmann::json& bad : {nlohmann::json::array(), nlohmann::json{{"instances", nlohmann::json::array()}},
                                    nlohmann::json{{"instances", {{{"host", "10.0.0.1"}}}}},
                                    nlohmann::json{{"instances", {one}}, {"validity_check", "on"}},
                                    nlohmann::json{{"instances", {one}}, {"stall_every", 0}},
                                    nlohmann::json{{"instances", {one}}, {"instance_timeout_ms", -5}}}) {
    EXPECT_THROW(RedlockClientConfig::from_json(bad), std::invalid_argument) << bad.dump();
  }
}

TEST(RedlockClient, QuorumDriftAndInstanceTimeout) {
  EXPECT_EQ(RedlockClient::quorum(3), 2u);
  EXPECT_EQ(RedlockClient::quorum(5), 3u);
  EXPECT_EQ(RedlockClient::drift(1000ms), 12ms);
  EXPECT_EQ(RedlockClient::drift(30000ms), 302ms);
  EXPECT_EQ(RedlockClient::auto_instance_timeout(200ms), 50ms);
  EXPECT_EQ(RedlockClient::auto_instance_timeout(10000ms), 50ms);
  EXPECT_EQ(RedlockClient::auto_instance_timeout(30000ms), 150ms);
}

// A grant's promise is ttl − drift from T1, rounded down: the same end the validity check
// measures the replies against, so a grant whose replies came later (K4, validity_check=off)
// promises less than its acquire took.
TEST(RedlockClient, PromisedValidityIsTtlLessDriftRoundedDown) {
  EXPECT_EQ(RedlockClient::promised_validity(1000ms), 988ms);
  EXPECT_EQ(RedlockClient::promised_validity(30000ms), 29698ms);
  EXPECT_EQ(RedlockClient::promised_validity(1001ms), 988ms) << "988.99 ms: never later than the check's end";
  EXPECT_EQ(RedlockClient::promised_validity(500ms), 493ms);
  EXPECT_LT(RedlockClient::promised_validity(1000ms), 1200ms) << "K4: stall_after_send_ms=1200 with ttl 1000";
}

TEST(RedlockClient, NothingReachableIsAFailNothingWasSent) {
  RedlockClientConfig c;
  for (int i = 0; i < 5; ++i) c.instances.push_back({"127.0.0.1", free_loopback_port()});
  RedlockClient client(c);
  LockResult a = client.acquire("k", 1000ms);
  EXPECT_EQ(a.outcome, Outcome::kFail);
  EXPECT_TRUE(a.not_sent);
  EXPECT_NE(a.error.find("no redis instance reachable: cannot connect to redis at 127.0.0.1:"), std::string::npos)
      << a.error;
  LockResult r = client.release(Grant{"k", std::nullopt, "v"});
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_TRUE(r.not_sent);
  EXPECT_EQ(client.acquire("k", 0ms).outcome, Outcome::kFail);
}

}  // namespace
}  // namespace fencecheck
