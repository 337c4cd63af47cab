#include "backends/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "backends/redis/redis_lock_client.h"
#include "backends/redis/redis_server.h"
#include "platform/os_util.h"

namespace fencecheck {
namespace {

TEST(BackendRegistry, FindsRedisAndNotUnknownNames) {
  const BackendInfo* redis = find_backend("redis");
  ASSERT_NE(redis, nullptr);
  EXPECT_EQ(redis->server_nodes, std::vector<std::string>{"n1"});
  ASSERT_EQ(redis->binaries.size(), 1u);
  EXPECT_EQ(redis->binaries[0].program, "redis-server");
  EXPECT_TRUE(redis->make_server && redis->make_client);
  EXPECT_EQ(find_backend("no-such-backend"), nullptr);
  EXPECT_EQ(find_backend("Redis"), nullptr);
  EXPECT_NE(backend_names().find("redis"), std::string::npos);
}

TEST(BackendRegistry, MissingBinaryMessageNamesProgramAndPackage) {
  BackendInfo fake;
  fake.name = "fake";
  fake.binaries = {{"sh", "dash"}, {"fencecheck-no-such-server", "fencecheck-fake-pkg"}};
  std::optional<std::string> msg = missing_binary_message(fake);
  ASSERT_TRUE(msg);
  EXPECT_EQ(*msg,
            "fencecheck-no-such-server is not installed (needed by backend fake): apt-get "
            "install fencecheck-fake-pkg (or run scripts/setup.sh)");
}

TEST(BackendRegistry, InstalledBinariesGiveNoMessage) {
  BackendInfo present;
  present.name = "present";
  present.binaries = {{"sh", "dash"}};
  EXPECT_FALSE(missing_binary_message(present));
}

TEST(BackendRegistry, LooksProgramsUpWhereSpawnDoes) {
  // Debian puts daemons outside a normal PATH; validation and spawn share one lookup.
  auto dirs = os::program_search_path();
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), "/usr/sbin"), dirs.end());
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), "/usr/share/zookeeper/bin"), dirs.end());
  BackendInfo absolute;
  absolute.name = "absolute";
  absolute.binaries = {{"/nonexistent/dir/sh", "dash"}};
  EXPECT_TRUE(missing_binary_message(absolute));
}

TEST(BackendOptions, DefaultsFilledUnknownAndBadValuesRefused) {
  const BackendInfo& redis = *find_backend("redis");
  EXPECT_EQ(resolve_backend_options(redis, {}), (BackendOptions{{"persistence", "none"}}));
  EXPECT_EQ(resolve_backend_options(redis, {"persistence=always"}),
            (BackendOptions{{"persistence", "always"}}));
  auto message = [&](const std::vector<std::string>& kv) {
    try {
      resolve_backend_options(redis, kv);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({"persistance=always"}),
            "backend redis: unknown option \"persistance\" (known: persistence)");
  EXPECT_EQ(message({"persistence=yes"}),
            "backend redis: option \"persistence\" cannot be \"yes\" (allowed: none, everysec, always)");
  EXPECT_EQ(message({"persistence"}), "backend redis: --backend-opt \"persistence\" is not key=value");
  EXPECT_EQ(message({"persistence=none", "persistence=always"}),
            "backend redis: option \"persistence\" given twice");
}

TEST(RedisClientConfig, RoundTripsAndRejectsBadFields) {
  RedisClientConfig c = RedisClientConfig::from_json({{"host", "10.1.2.3"}, {"port", 7000}});
  EXPECT_EQ(c.host, "10.1.2.3");
  EXPECT_EQ(c.port, 7000);
  RedisClientConfig back = RedisClientConfig::from_json(c.to_json());
  EXPECT_EQ(back.command_timeout, c.command_timeout);
  EXPECT_THROW(RedisClientConfig::from_json({{"port", 7000}}), std::invalid_argument);
  EXPECT_THROW(RedisClientConfig::from_json({{"host", "h"}, {"port", 0}}), std::invalid_argument);
  EXPECT_THROW(RedisClientConfig::from_json(
                   {{"host", "h"}, {"port", 1}, {"command_timeout_ms", -5}}),
               std::invalid_argument);
  EXPECT_THROW(RedisClientConfig::from_json(nlohmann::json::array()), std::invalid_argument);
}

TEST(RedisServerOptions, PersistenceLevels) {
  EXPECT_EQ(RedisServerOptions::from_options({}).persistence, RedisPersistence::kNone);
  EXPECT_EQ(RedisServerOptions::from_options({{"persistence", "everysec"}}).persistence,
            RedisPersistence::kEverySec);
  EXPECT_THROW(RedisServerOptions::from_options({{"persistence", "yes"}}), std::invalid_argument);
  EXPECT_THROW(find_backend("redis")->make_server({{"bogus", "1"}}), std::invalid_argument);
}

TEST(RedisConfigText, BindsNodeAndTurnsPersistenceOff) {
  std::string conf = redis_config_text("10.9.0.2", 6379, "/tmp/x/n1", RedisPersistence::kNone);
  EXPECT_NE(conf.find("bind 10.9.0.2\n"), std::string::npos);
  EXPECT_NE(conf.find("port 6379\n"), std::string::npos);
  EXPECT_NE(conf.find("save \"\"\n"), std::string::npos);
  EXPECT_NE(conf.find("appendonly no\n"), std::string::npos);
  EXPECT_NE(conf.find("protected-mode no\n"), std::string::npos);
  EXPECT_NE(conf.find("daemonize no\n"), std::string::npos);
  EXPECT_NE(conf.find("dir \"/tmp/x/n1\"\n"), std::string::npos);
  EXPECT_NE(redis_config_text("a", 1, "/d", RedisPersistence::kEverySec).find("appendfsync everysec\n"),
            std::string::npos);
  EXPECT_NE(redis_config_text("a", 1, "/d", RedisPersistence::kAlways).find("appendfsync always\n"),
            std::string::npos);
}

}  // namespace
}  // namespace fencecheck
