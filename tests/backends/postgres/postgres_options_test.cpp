// The postgres backend without a server: its registry entry, option validation, and the
// client config and session settings the options turn into.
#include <gtest/gtest.h>

#include <stdexcept>

#include "backends/postgres/postgres_lock_client.h"
#include "backends/postgres/postgres_server.h"
#include "backends/registry.h"

namespace fencecheck {
namespace {

const BackendInfo& postgres() {
  const BackendInfo* b = find_backend("postgres");
  if (b == nullptr) throw std::logic_error("postgres is not registered");
  return *b;
}

TEST(PostgresOptions, RegisteredWithItsBinariesAndDefaults) {
  const BackendInfo& b = postgres();
  EXPECT_EQ(b.server_nodes, std::vector<std::string>{"n1"});
  ASSERT_EQ(b.binaries.size(), 2u);
  EXPECT_EQ(b.binaries[0].program, "postgres");
  EXPECT_EQ(b.binaries[1].program, "initdb");
  EXPECT_EQ(b.binaries[0].debian_package, "postgresql");
  BackendOptions o = resolve_backend_options(b, {});
  EXPECT_EQ(o.at("lock"), "lease");
  EXPECT_EQ(o.at("idle_session_timeout_ms"), "0");
  EXPECT_EQ(o.at("keepalives_count"), "0");
}

TEST(PostgresOptions, BadValuesAreRefused) {
  const BackendInfo& b = postgres();
  EXPECT_THROW(resolve_backend_options(b, {"lock=redlock"}), std::invalid_argument);
  EXPECT_THROW(resolve_backend_options(b, {"persistence=always"}), std::invalid_argument);
  for (const std::string bad : {"idle_session_timeout_ms=-1", "idle_session_timeout_ms=1s",
                                "keepalives_idle_s=x", "keepalives_count=99999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(b.make_server(resolve_backend_options(b, {bad})), std::invalid_argument);
  }
}

TEST(PostgresOptions, SessionSettingsReachTheClientAndTheServerSession) {
  PostgresServerOptions o = PostgresServerOptions::from_options(
      resolve_backend_options(postgres(), {"lock=advisory", "idle_session_timeout_ms=1000",
                                           "keepalives_idle_s=2", "keepalives_count=3"}));
  EXPECT_EQ(o.client.lock, PostgresLockKind::kAdvisory);
  o.client.host = "10.1.2.3";
  o.client.port = 5433;
  PostgresClientConfig back = PostgresClientConfig::from_json(o.client.to_json());
  EXPECT_EQ(back.to_json(), o.client.to_json());
  EXPECT_EQ(back.idle_session_timeout_ms, 1000);

  PgConnectParams p = back.connect_params("c4");
  EXPECT_EQ(p.application_name, "c4");
  auto setting = [&](const std::string& name) {
    for (const auto& [k, v] : p.server_settings) {
      if (k == name) return v;
    }
    return std::string("(unset)");
  };
  EXPECT_EQ(setting("idle_session_timeout"), "1000");
  EXPECT_EQ(setting("statement_timeout"), std::to_string(back.command_timeout.count()));
  EXPECT_EQ(setting("tcp_keepalives_idle"), "2");
  EXPECT_EQ(setting("tcp_keepalives_count"), "3");
  EXPECT_EQ(setting("tcp_keepalives_interval"), "(unset)") << "0 keeps the OS default";
  EXPECT_EQ(p.keepalives_idle_s, 2);
}

TEST(PostgresOptions, MalformedClientConfigsNameTheField) {
  nlohmann::json good = {{"host", "10.0.0.1"}, {"port", 5432}, {"lock", "lease"}};
  EXPECT_NO_THROW(PostgresClientConfig::from_json(good));
  auto message = [](nlohmann::json j) {
    try {
      PostgresClientConfig::from_json(j);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message(nlohmann::json::array()).find("JSON object"), std::string::npos);
  nlohmann::json j = good;
  j.erase("host");
  EXPECT_NE(message(j).find("\"host\""), std::string::npos);
  j = good;
  j["port"] = 70000;
  EXPECT_NE(message(j).find("\"port\""), std::string::npos);
  j = good;
  j["lock"] = "mutex";
  EXPECT_NE(message(j).find("lease or advisory"), std::string::npos);
  j = good;
  j["command_timeout_ms"] = 0;
  EXPECT_NE(message(j).find("\"command_timeout_ms\""), std::string::npos);
}

TEST(PostgresOptions, ConfigFilesBindTheNodeAndTrustTheRunNetwork) {
  std::string conf = postgres_config_text("10.77.3.2", 5432, "/tmp/x'y", PgSharedMemory::kPrivateIpc);
  EXPECT_NE(conf.find("listen_addresses = '10.77.3.2'"), std::string::npos);
  EXPECT_NE(conf.find("port = 5432"), std::string::npos);
  EXPECT_NE(conf.find("unix_socket_directories = '/tmp/x''y'"), std::string::npos);
  EXPECT_NE(conf.find("fsync = on"), std::string::npos);
  EXPECT_NE(conf.find("log_connections = on"), std::string::npos);
  EXPECT_NE(postgres_hba_text("10.77.3.2").find("host all all 10.77.3.0/24 trust"), std::string::npos);
  EXPECT_EQ(postgres_hba_text("127.0.0.1").find("/24"), std::string::npos);
}

// Dynamic shared memory never goes to /dev/shm, where a SIGKILLed server leaves it: SysV in
// the server's own IPC namespace (root), or files in its data directory.
TEST(PostgresOptions, DynamicSharedMemoryStaysWithTheServer) {
  EXPECT_NE(postgres_config_text("10.77.3.2", 5432, "", PgSharedMemory::kPrivateIpc)
                .find("dynamic_shared_memory_type = sysv\n"),
            std::string::npos);
  EXPECT_NE(postgres_config_text("127.0.0.1", 5432, "", PgSharedMemory::kDataDir)
                .find("dynamic_shared_memory_type = mmap\n"),
            std::string::npos);
}

}  // namespace
}  // namespace fencecheck
