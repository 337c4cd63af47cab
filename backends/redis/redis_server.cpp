#include "backends/redis/redis_server.h"

#include <fstream>
#include <stdexcept>

#include "backends/redis/redis_connection.h"
#include "backends/redis/redis_lock_client.h"

namespace fencecheck {

std::vector<BackendOption> redis_server_option_specs() {
  return {{"persistence",
           "what survives a crash: none (nothing), everysec (AOF, fsync each second), "
           "always (AOF, fsync each write)",
           "none",
           {"none", "everysec", "always"}}};
}

RedisServerOptions RedisServerOptions::from_options(const BackendOptions& options) {
  RedisServerOptions o;
  for (const auto& [name, value] : options) {
    if (name != "persistence") throw std::invalid_argument("unknown redis option \"" + name + "\"");
    if (value == "none") o.persistence = RedisPersistence::kNone;
    else if (value == "everysec") o.persistence = RedisPersistence::kEverySec;
    else if (value == "always") o.persistence = RedisPersistence::kAlways;
    else throw std::invalid_argument("redis option persistence cannot be \"" + value + "\"");
  }
  return o;
}

std::string redis_config_text(const std::string& address, std::uint16_t port,
                              const std::filesystem::path& dir, RedisPersistence persistence) {
  std::string conf;
  conf += "# written by fencecheck\n";
  conf += "bind " + address + "\n";
  conf += "port " + std::to_string(port) + "\n";
  // The test network is private; clients connect from other nodes without AUTH.
  conf += "protected-mode no\n";
  conf += "daemonize no\n";
  conf += "logfile \"\"\n";  // stdout, which the Runtime appends to the node's log
  conf += "dir \"" + dir.string() + "\"\n";
  conf += "save \"\"\n";
  switch (persistence) {
    case RedisPersistence::kNone: conf += "appendonly no\n"; break;
    case RedisPersistence::kEverySec: conf += "appendonly yes\nappendfsync everysec\n"; break;
    case RedisPersistence::kAlways: conf += "appendonly yes\nappendfsync always\n"; break;
  }
  return conf;
}

RedisServer::RedisServer(RedisServerOptions options, std::vector<std::string> nodes)
    : DaemonServer(std::move(nodes), options.ready_timeout), options_(options) {}

const RedisServer::Endpoint& RedisServer::endpoint(const std::string& node) const {
  return configured(endpoints_, node, "redis");
}

void RedisServer::configure(Runtime& runtime, const std::string& node,
                            const std::filesystem::path& dir) {
  Endpoint e{runtime.node(node).address, runtime.port(node, "redis", 6379), dir};
  std::filesystem::path conf_path = dir / "redis.conf";
  std::ofstream conf(conf_path, std::ios::trunc);
  conf << redis_config_text(e.address, e.port, dir, options_.persistence);
  conf.flush();
  if (!conf) throw HarnessError("redis: cannot write " + conf_path.string());
  endpoints_[node] = e;
}

ProcessSpec RedisServer::daemon(const std::string& node) const {
  const Endpoint& e = endpoint(node);
  ProcessSpec spec;
  spec.node = node;
  spec.name = "redis-server";
  spec.argv = {"redis-server", (e.dir / "redis.conf").string()};
  spec.log = e.dir / "redis-server.log";
  spec.cwd = e.dir;
  return spec;
}

bool RedisServer::ready(Runtime& runtime, const std::string& node) {
  const Endpoint& e = endpoint(node);
  return port_answers(runtime, node, e.address, e.port,
                      [](const HostPort& t) { return redis_ping(t.address, t.port, std::chrono::milliseconds(500)); });
}

nlohmann::json RedisServer::client_config() const {
  const Endpoint& e = endpoint(nodes().front());
  return client_config_at({{e.address, e.port}});
}

nlohmann::json RedisServer::client_config_at(const std::vector<HostPort>& servers) const {
  if (servers.size() != 1) {
    throw std::invalid_argument("backend redis takes one server, not " + std::to_string(servers.size()));
  }
  RedisClientConfig c;
  c.host = servers[0].address;
  c.port = servers[0].port;
  return c.to_json();
}

}  // namespace fencecheck
