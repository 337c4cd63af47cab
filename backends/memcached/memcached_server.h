// The server side of the `memcached` backend: one memcached on node n1 (a DaemonServer),
// on the node's address and port 11211 (a free port per node under --runtime local), as
// user memcache (nobody when there is none) when the harness runs as root: memcached
// refuses root without -u. It is ready once it answers "version".
//
// Options (--backend-opt): memory_mb, the item memory (-m, default 64, 2..65536: below 2
// memcached refuses its 1 MB item limit), and evict = on (default: a full cache evicts the
// least recently used items, held locks too) or off (-M: a full cache answers
// "SERVER_ERROR out of memory" to every store instead, lock acquires included).
//
// No persistence: memcached keeps everything in memory, so a kill or a restart loses every
// key, held locks with them; start() after one begins with an empty cache. Nothing is
// written to disk but the log; teardown leaves only the log.
//
// press_memory (the memory-pressure fault): from inside the node's network, stores filler
// items of random values and lock-item sizes (so that they land in the lock keys' slab
// classes, whose LRU tails then go) without pause until the deadline, each living
// until a second or two past it, and reports how many were stored, refused and how many items
// memcached evicted meanwhile (its `stats` evictions). Thread-safety as LockServer says;
// press_memory may run while the clients' ops go on (a connection of its own).
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

struct MemcachedServerOptions {
  std::int64_t memory_mb = 64;
  bool evict = true;
  std::chrono::milliseconds ready_timeout{10000};
  // From resolved backend options. Throws std::invalid_argument naming a bad option.
  static MemcachedServerOptions from_options(const BackendOptions& options);
};

// The option declarations of the memcached backend.
std::vector<BackendOption> memcached_option_specs();

class MemcachedServer : public DaemonServer {
 public:
  explicit MemcachedServer(MemcachedServerOptions options);

  // {"host", "port"} (MemcachedClientConfig).
  nlohmann::json client_config() const override;
  nlohmann::json client_config_at(const std::vector<HostPort>& servers) const override;
  MemoryPressure press_memory(const std::string& node, const Deadline& deadline) override;

 protected:
  void configure(Runtime& runtime, const std::string& node, const std::filesystem::path& dir) override;
  ProcessSpec daemon(const std::string& node) const override;
  bool ready(Runtime& runtime, const std::string& node) override;

 private:
  struct Endpoint {
    std::string address;
    std::uint16_t port = 0;
    std::filesystem::path dir;
  };
  const Endpoint& endpoint(const std::string& node) const;

  MemcachedServerOptions options_;
  std::map<std::string, Endpoint> endpoints_;
};

}  // namespace fencecheck
