// The mariadb client's config alone, no server: parsing, its errors naming the field, the
// round trip through to_json, the names of lock kinds and lease modes, and which server a
// client node uses.
#include "backends/mariadb/mariadb_lock_client.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace fencecheck {
namespace {

nlohmann::json three_servers() {
  return {{"servers",
           {{{"host", "10.0.0.1"}, {"port", 3306}},
            {{"host", "10.0.0.2"}, {"port", 3307}},
            {{"host", "10.0.0.3"}, {"port", 3308}}}},
          {"lock", "lease"},
          {"lease", "read-update"}};
}

// The message of the std::invalid_argument config throws; "" when it throws nothing.
std::string error_of(const nlohmann::json& config) {
  try {
    MariadbClientConfig::from_json(config);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(MariadbClientConfigTest, ParsesEveryFieldAndDefaultsTheTimeouts) {
  MariadbClientConfig c = MariadbClientConfig::from_json(three_servers());
  ASSERT_EQ(c.servers.size(), 3u);
  EXPECT_EQ(c.servers[1].host, "10.0.0.2");
  EXPECT_EQ(c.servers[2].port, 3308);
  EXPECT_EQ(c.lock, MariadbLockKind::kLease);
  EXPECT_EQ(c.lease, MariadbLeaseMode::kReadUpdate);
  EXPECT_EQ(c.connect_timeout.count(), 1000);
  EXPECT_EQ(c.command_timeout.count(), 1000);

  nlohmann::json j = three_servers();
  j["connect_timeout_ms"] = 250;
  j["command_timeout_ms"] = 750;
  j["servers"][0].erase("port");
  c = MariadbClientConfig::from_json(j);
  EXPECT_EQ(c.connect_timeout.count(), 250);
  EXPECT_EQ(c.command_timeout.count(), 750);
  EXPECT_EQ(c.servers[0].port, 3306) << "the port defaults to MariaDB's";
}

TEST(MariadbClientConfigTest, RoundTripsThroughJson) {
  nlohmann::json j = three_servers();
  j["lock"] = "named";
  j["lease"] = "for-update";
  j["command_timeout_ms"] = 321;
  MariadbClientConfig c = MariadbClientConfig::from_json(j);
  nlohmann::json out = c.to_json();
  EXPECT_EQ(out.at("lock"), "named");
  EXPECT_EQ(out.at("lease"), "for-update");
  EXPECT_EQ(out.at("command_timeout_ms"), 321);
  EXPECT_EQ(out.at("connect_timeout_ms"), 1000);
  EXPECT_EQ(out.at("servers"), j.at("servers"));
  EXPECT_EQ(MariadbClientConfig::from_json(out).to_json(), out);
}

TEST(MariadbClientConfigTest, MalformedConfigsNameTheirField) {
  EXPECT_NE(error_of(nlohmann::json::array()).find("JSON object"), std::string::npos);
  auto with = [](const char* field, nlohmann::json value) {
    nlohmann::json j = three_servers();
    j[field] = std::move(value);
    return j;
  };
  auto without = [](const char* field) {
    nlohmann::json j = three_servers();
    j.erase(field);
    return j;
  };
  struct Case {
    nlohmann::json config;
    std::string names;
  };
  nlohmann::json no_host = three_servers();
  no_host["servers"][1].erase("host");
  nlohmann::json bad_port = three_servers();
  bad_port["servers"][2]["port"] = 70000;
  nlohmann::json text_port = three_servers();
  text_port["servers"][0]["port"] = "3306";
  const std::vector<Case> cases = {
      {without("servers"), "\"servers\""},
      {with("servers", nlohmann::json::array()), "\"servers\""},
      {with("servers", "10.0.0.1:3306"), "\"servers\""},
      {with("servers", {"10.0.0.1"}), "\"servers[0]\""},
      {no_host, "\"servers[1].host\""},
      {with("servers", {{{"host", ""}}}), "\"servers[0].host\""},
      {bad_port, "servers[2]: \"port\""},
      {text_port, "servers[0]: \"port\""},
      {without("lock"), "\"lock\""},
      {with("lock", "advisory"), "\"lock\""},
      {with("lock", 1), "\"lock\""},
      {without("lease"), "\"lease\""},
      {with("lease", "optimistic"), "\"lease\""},
      {with("connect_timeout_ms", 0), "\"connect_timeout_ms\""},
      {with("command_timeout_ms", -5), "\"command_timeout_ms\""},
      {with("command_timeout_ms", 1.5), "\"command_timeout_ms\""},
  };
  for (const Case& c : cases) {
    std::string error = error_of(c.config);
    EXPECT_NE(error.find(c.names), std::string::npos) << c.config.dump() << " said: " << error;
    EXPECT_EQ(error.rfind("mariadb client config", 0), 0u) << error;
  }
}

TEST(MariadbClientConfigTest, KindAndModeNames) {
  for (MariadbLockKind k : {MariadbLockKind::kNamed, MariadbLockKind::kLease}) {
    EXPECT_EQ(parse_mariadb_lock_kind(to_string(k)), k);
  }
  for (MariadbLeaseMode m :
       {MariadbLeaseMode::kReadUpdate, MariadbLeaseMode::kForUpdate, MariadbLeaseMode::kConditional}) {
    EXPECT_EQ(parse_mariadb_lease_mode(to_string(m)), m);
  }
  EXPECT_EQ(to_string(MariadbLockKind::kNamed), "named");
  EXPECT_EQ(to_string(MariadbLeaseMode::kReadUpdate), "read-update");
  EXPECT_EQ(to_string(MariadbLeaseMode::kForUpdate), "for-update");
  EXPECT_EQ(to_string(MariadbLeaseMode::kConditional), "conditional");
  EXPECT_THROW(parse_mariadb_lock_kind("Named"), std::invalid_argument);
  EXPECT_THROW(parse_mariadb_lease_mode(""), std::invalid_argument);
}

TEST(MariadbClientConfigTest, ClientNodesSpreadOverTheServersInOrder) {
  MariadbClientConfig c = MariadbClientConfig::from_json(three_servers());
  EXPECT_EQ(c.server_for("c1").host, "10.0.0.1");
  EXPECT_EQ(c.server_for("c2").host, "10.0.0.2");
  EXPECT_EQ(c.server_for("c3").host, "10.0.0.3");
  EXPECT_EQ(c.server_for("c4").host, "10.0.0.1");
  EXPECT_EQ(c.server_for("c11").host, "10.0.0.2") << "(11 - 1) % 3 = 1";
  EXPECT_EQ(c.server_for("worker").host, "10.0.0.1") << "no number: the first";
  EXPECT_EQ(c.server_for("c0").host, "10.0.0.1");
  EXPECT_EQ(c.server_for("").host, "10.0.0.1");
  EXPECT_EQ(c.server_for("c99999999999999999999999").host, "10.0.0.1") << "a number too big for any server";

  MariadbClientConfig one = MariadbClientConfig::from_json(
      {{"servers", {{{"host", "127.0.0.1"}, {"port", 13400}}}}, {"lock", "named"}, {"lease", "conditional"}});
  for (const char* name : {"c1", "c2", "c3", "probe"}) {
    EXPECT_EQ(one.server_for(name).port, 13400) << name;
  }
  EXPECT_THROW(MariadbClientConfig{}.server_for("c1"), std::invalid_argument);
}

TEST(MariadbClientConfigTest, ASessionRegistersUnderItsClientAndStopsWhatItGaveUpOn) {
  nlohmann::json j = three_servers();
  j["command_timeout_ms"] = 600;
  MariadbConnectParams p = MariadbClientConfig::from_json(j).connect_params("c2");
  EXPECT_EQ(p.host, "10.0.0.2");
  EXPECT_EQ(p.port, 3307);
  EXPECT_EQ(p.client, "c2");
  EXPECT_EQ(p.command_timeout.count(), 600);
  EXPECT_EQ(p.statement_timeout.count(), 600) << "max_statement_time = the client's command timeout";
}

TEST(MariadbConnectionTest, QuoteMakesOneStringLiteral) {
  MariadbConnection conn({});
  EXPECT_EQ(conn.quote("k"), "'k'");
  EXPECT_EQ(conn.quote("it's"), "'it''s'");
  EXPECT_EQ(conn.quote("a\\'); DROP TABLE x; --"), "'a\\\\''); DROP TABLE x; --'");
  EXPECT_EQ(conn.quote(std::string("nul\0byte", 8)), "'nul\\0byte'");
  EXPECT_EQ(conn.quote("üñí"), "'üñí'");
  EXPECT_EQ(conn.session(), 0u) << "no session before the first statement";
  EXPECT_FALSE(conn.connected());
}

TEST(MariadbConnectionTest, TheSchemaIsIdempotentInnoDbWithPrimaryKeys) {
  const auto& schema = mariadb_schema_statements();
  ASSERT_EQ(schema.size(), 3u);
  for (const std::string& s : schema) EXPECT_NE(s.find("IF NOT EXISTS"), std::string::npos) << s;
  for (std::size_t i = 1; i < schema.size(); ++i) {
    EXPECT_NE(schema[i].find("ENGINE=InnoDB"), std::string::npos) << schema[i];
    EXPECT_NE(schema[i].find("PRIMARY KEY"), std::string::npos) << schema[i];
  }
}

}  // namespace
}  // namespace fencecheck
