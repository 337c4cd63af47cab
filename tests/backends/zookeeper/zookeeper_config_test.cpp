// The zookeeper backend without servers: its registry entry, option checks, the zoo.cfg
// it writes, the srvr parser, the client config, a client with nobody to talk to, and the
// cache helpers its class archive relies on.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "backends/registry.h"
#include "backends/zookeeper/four_letter.h"
#include "backends/zookeeper/zookeeper_lock_client.h"
#include "backends/zookeeper/zookeeper_server.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "platform/tcp.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

TEST(ZooKeeperBackend, RegistryEntry) {
  const BackendInfo* zk = find_backend("zookeeper");
  ASSERT_NE(zk, nullptr);
  EXPECT_EQ(zk->server_nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_TRUE(zk->offers.has(Capability::kNamesLeader));
  ASSERT_FALSE(zk->binaries.empty());
  EXPECT_EQ(zk->binaries[0].program, "java");
  EXPECT_EQ(resolve_backend_options(*zk, {}),
            (BackendOptions{{"session_timeout_ms", "6000"}, {"tick_ms", "1000"}}));
  EXPECT_EQ(zk->make_server(resolve_backend_options(*zk, {}))->nodes(), zk->server_nodes);
}

TEST(ZooKeeperBackend, SessionTimeoutMustLieWithinTheTickBounds) {
  const BackendInfo& zk = *find_backend("zookeeper");
  auto options = [&](std::vector<std::string> kv) {
    return ZooKeeperServerOptions::from_options(resolve_backend_options(zk, kv));
  };
  EXPECT_EQ(options({"session_timeout_ms=4000"}).session_timeout, 4000ms);
  EXPECT_EQ(options({"session_timeout_ms=2000"}).session_timeout, 2000ms);
  EXPECT_EQ(options({"session_timeout_ms=20000"}).session_timeout, 20000ms);
  EXPECT_EQ(options({"tick_ms=2000", "session_timeout_ms=40000"}).tick, 2000ms);
  try {
    options({"session_timeout_ms=1999"});
    ADD_FAILURE() << "1999 ms accepted with a 1000 ms tick";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2000..20000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(options({"session_timeout_ms=20001"}), std::invalid_argument);
  EXPECT_THROW(options({"session_timeout_ms=6s"}), std::invalid_argument);
  EXPECT_THROW(options({"tick_ms=0"}), std::invalid_argument);
  EXPECT_THROW(options({"tick_ms=-5"}), std::invalid_argument);
  EXPECT_THROW(zk.make_server(resolve_backend_options(zk, {"session_timeout_ms=100"})), std::invalid_argument);
}

TEST(ZooKeeperBackend, ConfigListsTheWholeEnsemble) {
  ZooKeeperServerOptions o;
  std::vector<ZooKeeperPeer> peers = {{1, "10.0.0.1", 2181, 2888, 3888},
                                      {2, "10.0.0.2", 2181, 2888, 3888},
                                      {3, "10.0.0.3", 2181, 2888, 3888}};
  std::string conf = zookeeper_config_text(o, peers[1], peers, "/tmp/x/data");
  for (const char* line : {"tickTime=1000\n", "dataDir=/tmp/x/data\n", "clientPort=2181\n",
                           "clientPortAddress=10.0.0.2\n", "admin.enableServer=false\n",
                           "4lw.commands.whitelist=srvr,ruok,mntr,stat,conf\n", "minSessionTimeout=2000\n",
                           "maxSessionTimeout=20000\n", "server.1=10.0.0.1:2888:3888\n",
                           "server.2=10.0.0.2:2888:3888\n", "server.3=10.0.0.3:2888:3888\n"}) {
    EXPECT_NE(conf.find(line), std::string::npos) << line << " missing from\n" << conf;
  }
}

TEST(ZooKeeperBackend, SrvrModeParsing) {
  EXPECT_EQ(zk_srvr_mode("Zookeeper version: 3.8.0\nZxid: 0x100000000\nMode: leader\nNode count: 5\n"), "leader");
  EXPECT_EQ(zk_srvr_mode("Latency min/avg/max: 0/0.0/0\nMode: follower\n"), "follower");
  EXPECT_EQ(zk_srvr_mode("This ZooKeeper instance is not currently serving requests\n"), std::nullopt);
  EXPECT_EQ(zk_srvr_mode(""), std::nullopt);
  EXPECT_EQ(zk_srvr_mode("XMode: leader\n"), std::nullopt);
}

TEST(ZooKeeperBackend, FourLetterWordToNobodyIsNothing) {
  std::uint16_t port = free_loopback_port();
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(zk_four_letter("127.0.0.1", port, "srvr", 300ms), std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(zk_four_letter("not-an-address", port, "srvr", 300ms), std::nullopt);
}

TEST(ZooKeeperClientConfig, RoundTripsAndRejectsBadFields) {
  ZooKeeperClientConfig c = ZooKeeperClientConfig::from_json({{"hosts", "a:1,b:2"}, {"session_timeout_ms", 4000}});
  EXPECT_EQ(c.hosts, "a:1,b:2");
  EXPECT_EQ(c.session_timeout, 4000ms);
  EXPECT_EQ(c.connect_timeout, 1000ms);
  ZooKeeperClientConfig back = ZooKeeperClientConfig::from_json(c.to_json());
  EXPECT_EQ(back.to_json(), c.to_json());
  EXPECT_THROW(ZooKeeperClientConfig::from_json({{"hosts", ""}}), std::invalid_argument);
  EXPECT_THROW(ZooKeeperClientConfig::from_json({{"port", 1}}), std::invalid_argument);
  EXPECT_THROW(ZooKeeperClientConfig::from_json({{"hosts", "a:1"}, {"max_wait_ms", 0}}), std::invalid_argument);
  EXPECT_THROW(ZooKeeperClientConfig::from_json({{"hosts", "a:1"}, {"request_timeout_ms", "1"}}),
               std::invalid_argument);
  EXPECT_THROW(ZooKeeperClientConfig::from_json(nlohmann::json::array()), std::invalid_argument);
}

// Nobody listens: nothing can be sent, so acquire fails definitely (not_sent), within the
// connect timeout; a grant this client never gave is not its to release.
TEST(ZooKeeperLockClient, NoEnsembleMeansDefiniteFailure) {
  ZooKeeperClientConfig c;
  c.hosts = "127.0.0.1:" + std::to_string(free_loopback_port());
  c.connect_timeout = 300ms;
  ZooKeeperLockClient client(c, "c1");
  auto t0 = std::chrono::steady_clock::now();
  LockResult r = client.acquire("k", 1s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_TRUE(r.not_sent);
  EXPECT_FALSE(r.grant);
  EXPECT_EQ(client.acquire("k", 0ms).outcome, Outcome::kFail);
  LockResult rel = client.release(Grant{"k", 5, "/fc/k/lock-x-0000000001"});
  EXPECT_EQ(rel.outcome, Outcome::kFail);
  EXPECT_EQ(rel.error, "not held");
}

// DaemonServer's cache helpers, which the servers' class archive (and PostgreSQL's kept
// cluster) rely on.
struct Cache : DaemonServer {
  using DaemonServer::fingerprint;
  using DaemonServer::partial_path;
  using DaemonServer::reuse_dir;
};

struct CacheEnv {
  explicit CacheEnv(const char* value) {
    if (const char* old = std::getenv("FENCECHECK_CACHE")) saved = old;
    if (value) ::setenv("FENCECHECK_CACHE", value, 1);
    else ::unsetenv("FENCECHECK_CACHE");
  }
  ~CacheEnv() {
    if (saved) ::setenv("FENCECHECK_CACHE", saved->c_str(), 1);
    else ::unsetenv("FENCECHECK_CACHE");
  }
  std::optional<std::string> saved;
};

TEST(DaemonServerCache, ReuseDirIsPrivateAndFencecheckCacheChoosesOrTurnsItOff) {
  RunState state(RunState::new_run_id());
  std::unique_ptr<Runtime> local = make_runtime("local", state.run_id(), state);
  const std::filesystem::path root = std::filesystem::temp_directory_path() / ("fc-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  {
    CacheEnv env(root.c_str());
    auto dir = Cache::reuse_dir(*local, "zookeeper");
    ASSERT_TRUE(dir);
    EXPECT_EQ(*dir, root / "zookeeper");
    EXPECT_EQ(std::filesystem::status(*dir).permissions(), std::filesystem::perms::owner_all);
    EXPECT_EQ(std::filesystem::status(root).permissions(), std::filesystem::perms::owner_all);
    // Somebody else could plant a cluster or an archive there: no cache, then.
    std::filesystem::permissions(*dir, std::filesystem::perms::others_write, std::filesystem::perm_options::add);
    EXPECT_EQ(Cache::reuse_dir(*local, "zookeeper"), std::nullopt);
  }
  {
    CacheEnv env("off");
    EXPECT_EQ(Cache::reuse_dir(*local, "zookeeper"), std::nullopt);
  }
  {
    CacheEnv env("");
    EXPECT_EQ(Cache::reuse_dir(*local, "zookeeper"), std::nullopt);
  }
  std::filesystem::remove_all(root);
}

TEST(DaemonServerCache, FingerprintFollowsPartsAndFilesAndPartialPathsDiffer) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("fc-fingerprint-" + std::to_string(::getpid()));
  std::ofstream(file) << "v1";
  const std::string a = Cache::fingerprint({"-Xmx256m"}, {file});
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(Cache::fingerprint({"-Xmx256m"}, {file}), a);
  EXPECT_NE(Cache::fingerprint({"-Xmx512m"}, {file}), a);
  EXPECT_NE(Cache::fingerprint({"-Xmx256", "m"}, {file}), a);
  std::ofstream(file) << "version 2";  // an upgrade: another size (and time)
  EXPECT_NE(Cache::fingerprint({"-Xmx256m"}, {file}), a);
  std::filesystem::remove(file);
  EXPECT_NE(Cache::fingerprint({"-Xmx256m"}, {file}), a) << "missing counts as such";

  const std::filesystem::path final_path = "/cache/zookeeper/classes-0123.jsa";
  const std::filesystem::path p1 = Cache::partial_path(final_path), p2 = Cache::partial_path(final_path);
  EXPECT_NE(p1, p2);
  EXPECT_EQ(p1.parent_path(), final_path.parent_path());
  EXPECT_EQ(p1.filename().string().rfind(".new-" + std::to_string(::getpid()) + "-", 0), 0u) << p1;
}

}  // namespace
}  // namespace fencecheck
