// The nats backend without a server (label `unit`): its options, each node's config file,
// what the monitoring port's /jsz says, the client config and key rules.
#include <gtest/gtest.h>

#include "backends/nats/nats_lock_client.h"
#include "backends/nats/nats_server.h"
#include "backends/registry.h"

namespace fencecheck {
namespace {

TEST(NatsOptions, DefaultsAreAThreeNodeClusterWithATwoSecondMaxAge) {
  const BackendInfo* nats = find_backend("nats");
  ASSERT_NE(nats, nullptr);
  NatsServerOptions o = NatsServerOptions::from_options(resolve_backend_options(*nats, {}));
  EXPECT_EQ(o.servers, 3);
  EXPECT_EQ(o.max_age.count(), 2000);
  EXPECT_EQ(o.bucket().replicas, 3);
  EXPECT_EQ(nats->lease_ms(resolve_backend_options(*nats, {"max_age_ms=700"}), 1000), 700);
  EXPECT_THROW(resolve_backend_options(*nats, {"servers=2"}), std::invalid_argument);
  EXPECT_THROW(NatsServerOptions::from_options(resolve_backend_options(*nats, {"max_age_ms=50"})),
               std::invalid_argument);
}

TEST(NatsConfig, EachNodeRoutesToTheOthersAndOneNodeHasNoCluster) {
  std::vector<NatsNode> cluster = {{"n1", "10.0.0.1", 4222, 6222, 8222}, {"n2", "10.0.0.2", 4222, 6222, 8222},
                                   {"n3", "10.0.0.3", 4222, 6222, 8222}};
  std::string c = nats_config(cluster[1], cluster, "/run/n2/store");
  EXPECT_NE(c.find("server_name: n2\n"), std::string::npos) << c;
  EXPECT_NE(c.find("listen: \"10.0.0.2:4222\""), std::string::npos) << c;
  EXPECT_NE(c.find("http: \"10.0.0.2:8222\""), std::string::npos) << c;
  EXPECT_NE(c.find("store_dir: \"/run/n2/store\""), std::string::npos) << c;
  EXPECT_NE(c.find("\"nats-route://10.0.0.1:6222\", \"nats-route://10.0.0.3:6222\""), std::string::npos) << c;
  EXPECT_EQ(c.find("10.0.0.2:6222\"]"), std::string::npos) << "no route to itself: " << c;
  std::string single = nats_config(cluster[0], {cluster[0]}, "/s");
  EXPECT_EQ(single.find("cluster"), std::string::npos) << single;
}

TEST(NatsJsz, ReadyNeedsJetStreamAndInAClusterAMetaLeader) {
  EXPECT_FALSE(nats_jsz_ready("not json", false));
  EXPECT_FALSE(nats_jsz_ready(R"({"disabled": true})", false));
  EXPECT_TRUE(nats_jsz_ready(R"({"config": {"store_dir": "/s"}})", false));
  EXPECT_FALSE(nats_jsz_ready(R"({"config": {}, "meta_cluster": {"cluster_size": 3}})", true));
  EXPECT_FALSE(nats_jsz_ready(R"({"config": {}, "meta_cluster": {"leader": ""}})", true));
  EXPECT_TRUE(nats_jsz_ready(R"({"config": {}, "meta_cluster": {"leader": "n2"}})", true));
}

TEST(NatsJsz, TheStreamLeaderIsReadFromTheStreamDetail) {
  const char* body = R"({"account_details": [{"name": "$G", "stream_detail": [
      {"name": "KV_other", "cluster": {"leader": "n1"}},
      {"name": "KV_locks", "cluster": {"name": "fencecheck", "leader": "n3", "replicas": []}}]}]})";
  EXPECT_EQ(nats_jsz_stream_leader(body, "KV_locks"), "n3");
  EXPECT_EQ(nats_jsz_stream_leader(body, "KV_none"), "");
  EXPECT_EQ(nats_jsz_stream_leader(R"({"account_details": [{"stream_detail": [{"name": "KV_locks"}]}]})",
                                   "KV_locks"),
            "");
  EXPECT_EQ(nats_jsz_stream_leader("[]", "KV_locks"), "");
}

TEST(NatsClientConfig, RoundTripsAndNamesABadField) {
  NatsClientConfig c = NatsClientConfig::from_json(
      {{"servers", {"10.0.0.1:4222", "10.0.0.2:4222"}}, {"max_age_ms", 900}, {"replicas", 1}});
  EXPECT_EQ(c.servers.size(), 2u);
  EXPECT_EQ(c.bucket.name, "locks");
  EXPECT_EQ(c.bucket.max_age.count(), 900);
  EXPECT_EQ(c.bucket.subject("l0"), "$KV.locks.l0");
  EXPECT_EQ(c.bucket.stream(), "KV_locks");
  EXPECT_EQ(NatsClientConfig::from_json(c.to_json()).to_json(), c.to_json());
  auto error_of = [](const nlohmann::json& j) {
    try {
      NatsClientConfig::from_json(j);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of({{"servers", nlohmann::json::array()}}).find("\"servers\""), std::string::npos);
  EXPECT_NE(error_of({{"servers", {"nohost"}}}).find("host:port"), std::string::npos);
  EXPECT_NE(error_of({{"servers", {"a:1"}}, {"max_age_ms", 10}}).find("max_age_ms"), std::string::npos);
  EXPECT_NE(error_of({{"servers", {"a:1"}}, {"bucket", "a.b"}}).find("\"bucket\""), std::string::npos);
}

TEST(NatsKeys, SubjectTokensOnly) {
  EXPECT_TRUE(nats_valid_key("l0"));
  EXPECT_TRUE(nats_valid_key("a/b=c_d-e.f"));
  for (const char* bad : {"", ".l0", "l0.", "a..b", "l 0", "l*", "l>"}) EXPECT_FALSE(nats_valid_key(bad)) << bad;
}

}  // namespace
}  // namespace fencecheck
