#include "backends/redis/redis_server.h"

#include <fstream>
#include <stdexcept>

#include "backends/redis/redis_connection.h"
#include "backends/redis/redis_lock_client.h"

namespace fencecheck {

RedisServerOptions RedisServerOptions::from_json(const nlohmann::json& j) {
  RedisServerOptions o;
  if (j.is_null()) return o;
  if (!j.is_object()) {
    throw std::invalid_argument("redis options must be a JSON object, got " + j.dump());
  }
  for (const auto& [name, value] : j.items()) {
    if (name == "persistence") {
      if (!value.is_boolean()) {
        throw std::invalid_argument("redis option \"persistence\" must be true or false, got " +
                                    value.dump());
      }
      o.persistence = value.get<bool>();
    } else {
      throw std::invalid_argument("unknown redis option \"" + name +
                                  "\" (known: persistence)");
    }
  }
  return o;
}

std::string redis_config_text(const std::string& address, std::uint16_t port,
                              const std::filesystem::path& dir, bool persistence) {
  std::string conf;
  conf += "# written by fencecheck\n";
  conf += "bind " + address + "\n";
  conf += "port " + std::to_string(port) + "\n";
  // The test network is private; clients connect from other nodes without AUTH.
  conf += "protected-mode no\n";
  conf += "daemonize no\n";
  conf += "logfile \"\"\n";  // stdout, which the Supervisor appends to the node's log
  conf += "dir \"" + dir.string() + "\"\n";
  conf += "save \"\"\n";
  conf += persistence ? "appendonly yes\nappendfsync everysec\n" : "appendonly no\n";
  return conf;
}

RedisServer::RedisServer(RedisServerOptions options, std::string node)
    : options_(options), node_(std::move(node)) {}

void RedisServer::start(Runtime& runtime, Supervisor& supervisor,
                        const std::filesystem::path& nodes_dir) {
  const Node& node = runtime.node(node_);
  address_ = node.address;
  port_ = runtime.port(node_, "redis", 6379);
  std::filesystem::path dir = nodes_dir / node_;
  std::filesystem::path conf_path = dir / "redis.conf";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  {
    std::ofstream conf(conf_path, std::ios::trunc);
    conf << redis_config_text(address_, port_, std::filesystem::absolute(dir),
                              options_.persistence);
    if (ec || !conf) {
      throw HarnessError("redis: cannot write " + conf_path.string() +
                         (ec ? ": " + ec.message() : std::string()));
    }
  }
  ProcessSpec spec;
  spec.node = node_;
  spec.name = "redis-server";
  spec.argv = {"redis-server", std::filesystem::absolute(conf_path).string()};
  spec.log = dir / "redis-server.log";
  spec.cwd = dir;
  process_ = &supervisor.spawn(spec);
  const std::string address = address_;
  const std::uint16_t port = port_;
  supervisor.wait_ready(
      *process_,
      [&] {
        if (!supervisor.tcp_connects(node_, address, port, std::chrono::milliseconds(200))) {
          return false;
        }
        bool pong = false;
        runtime.run_in(node_, [&] {
          pong = redis_ping(address, port, std::chrono::milliseconds(500));
        });
        return pong;
      },
      options_.ready_timeout);
}

nlohmann::json RedisServer::client_config() const {
  RedisClientConfig c;
  c.host = address_;
  c.port = port_;
  return c.to_json();
}

std::vector<Process*> RedisServer::processes() {
  if (process_ == nullptr) return {};
  return {process_};
}

void RedisServer::stop() {
  if (process_ != nullptr) process_->stop(std::chrono::milliseconds(2000));
}

}  // namespace fencecheck
