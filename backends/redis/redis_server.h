// The server side of the `redis` backend: one redis-server on node n1 (a DaemonServer).
//
// Option `persistence` (--backend-opt persistence=…): `none` (default; no RDB, no AOF, so
// a crash-restart loses every lock), `everysec` (append-only file, fsync once a second:
// a kill -9 keeps the locks, since the page cache survives a process crash; only a power
// loss would lose the last second) or `always` (fsync before each reply).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/daemon_server.h"
#include "backends/registry.h"

namespace fencecheck {

enum class RedisPersistence { kNone, kEverySec, kAlways };

struct RedisServerOptions {
  RedisPersistence persistence = RedisPersistence::kNone;
  std::chrono::milliseconds ready_timeout{10000};
  // From resolved backend options. Throws std::invalid_argument for a bad value.
  static RedisServerOptions from_options(const BackendOptions& options);
};

// The option declarations of the redis backends (shared with redis-based backends).
std::vector<BackendOption> redis_server_option_specs();

// The redis.conf text for a server bound to address:port that keeps its files in dir.
std::string redis_config_text(const std::string& address, std::uint16_t port,
                              const std::filesystem::path& dir, RedisPersistence persistence);

class RedisServer : public DaemonServer {
 public:
  explicit RedisServer(RedisServerOptions options, std::vector<std::string> nodes = {"n1"});

  // For one server: {"host", "port"} (RedisClientConfig).
  nlohmann::json client_config() const override;
  nlohmann::json client_config_at(const std::vector<HostPort>& servers) const override;

 protected:
  void configure(Runtime& runtime, const std::string& node,
                 const std::filesystem::path& dir) override;
  ProcessSpec daemon(const std::string& node) const override;
  bool ready(Runtime& runtime, const std::string& node) override;

  struct Endpoint {
    std::string address;
    std::uint16_t port = 0;
    std::filesystem::path dir;
  };
  const Endpoint& endpoint(const std::string& node) const;

 private:
  RedisServerOptions options_;
  std::map<std::string, Endpoint> endpoints_;
};

}  // namespace fencecheck
