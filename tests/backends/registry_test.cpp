#include "backends/registry.h"
#include "tests/support/setup_sh.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "backends/redis/redis_lock_client.h"
#include "backends/redis/redis_server.h"

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

TEST(BackendRegistry, LooksProgramsUpInTheDirectoriesItsEntryNames) {
  // Debian puts some servers off every PATH; the registry entry says where, and the same
  // lookup serves validation and the servers (find_binary).
  char tmpl[] = "/tmp/fc-registry-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = std::filesystem::path(tmpl) / "lib" / "7" / "bin";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "fc-off-path-server") << "#!/bin/sh\n";
  std::filesystem::permissions(dir / "fc-off-path-server", std::filesystem::perms::owner_all);
  BackendInfo off_path;
  off_path.name = "off-path";
  off_path.binaries = {{"fc-off-path-server", "fc-pkg"}};
  EXPECT_TRUE(missing_binary_message(off_path)) << "found without its directory";
  off_path.binaries = {{"fc-off-path-server", "fc-pkg", {std::string(tmpl) + "/lib/*/bin"}}};
  EXPECT_FALSE(missing_binary_message(off_path));
  EXPECT_EQ(find_binary(off_path.binaries[0]), (dir / "fc-off-path-server").string());
  std::filesystem::remove_all(tmpl);

  BackendInfo absolute;
  absolute.name = "absolute";
  absolute.binaries = {{"/nonexistent/dir/sh", "dash"}};
  EXPECT_TRUE(missing_binary_message(absolute));
}

TEST(BackendRegistry, SetupShInstallsEveryPackageTheRegistryNames) {
  const std::set<std::string> installed = testing::setup_sh_packages(FENCECHECK_SOURCE_DIR, "servers");
  ASSERT_TRUE(installed.count("iptables")) << "setup.sh's package list was not read";
  for (const BackendInfo& backend : backend_registry()) {
    ASSERT_FALSE(backend.binaries.empty()) << backend.name;
    for (const BackendInfo::Binary& bin : backend.binaries) {
      EXPECT_TRUE(installed.count(bin.debian_package))
          << "backend " << backend.name << " needs " << bin.program << " from "
          << bin.debian_package << ", which scripts/setup.sh does not install";
    }
  }
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
