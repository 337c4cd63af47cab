// The server side of the `redis` backend: one redis-server on node n1.
//
// Options (JSON object, all optional): {"persistence": false} — true turns on the
// append-only file (fsync every second), so a crash-restart keeps the locks. Unknown
// options are an error. Follows LockServer's contract; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/lock_server.h"

namespace fencecheck {

struct RedisServerOptions {
  bool persistence = false;
  std::chrono::milliseconds ready_timeout{10000};
  // Throws std::invalid_argument naming a bad or unknown option.
  static RedisServerOptions from_json(const nlohmann::json& j);
};

// The redis.conf text for a server bound to address:port that keeps its files in dir.
std::string redis_config_text(const std::string& address, std::uint16_t port,
                              const std::filesystem::path& dir, bool persistence);

class RedisServer : public LockServer {
 public:
  explicit RedisServer(RedisServerOptions options, std::string node = "n1");

  void start(Runtime& runtime, Supervisor& supervisor,
             const std::filesystem::path& nodes_dir) override;
  nlohmann::json client_config() const override;
  std::vector<Process*> processes() override;
  void stop() override;

 private:
  RedisServerOptions options_;
  std::string node_;
  std::string address_;
  std::uint16_t port_ = 0;
  Process* process_ = nullptr;
};

}  // namespace fencecheck
