#include "backends/memcached/memcached_server.h"

#include <pwd.h>
#include <unistd.h>

#include <random>
#include <stdexcept>

#include "backends/memcached/memcached_connection.h"
#include "backends/memcached/memcached_lock_client.h"

namespace fencecheck {
namespace {

constexpr std::uint16_t kMemcachedPort = 11211;

// The user memcached drops root for (-u): the package's own, else nobody.
std::string memcached_user() { return ::getpwnam("memcache") != nullptr ? "memcache" : "nobody"; }

// memcached's own count of evictions since it started ("STAT evictions N"); nullopt when it
// does not answer.
std::optional<std::int64_t> memcached_evictions(MemcachedConnection& conn) {
  std::optional<std::int64_t> evictions;
  MemcachedReply r = conn.request_until("stats\r\n", "END", [&](const std::string& line) {
    if (line.rfind("STAT evictions ", 0) == 0) evictions = std::stoll(line.substr(15));
  });
  return r.status == MemcachedReply::Status::kReply ? evictions : std::nullopt;
}

// Filler items: keys like a lock's, values as long as a lock's owner (GrantOwners: about 25
// bytes) give or take 16, so that they fill the slab classes the lock items live in.
class MemcachedFiller {
 public:
  explicit MemcachedFiller(std::chrono::seconds ttl) : ttl_s_(std::to_string(ttl.count())), rng_(std::random_device{}()) {
    static const char kHex[] = "0123456789abcdef";
    for (char& c : random_) c = kHex[rng_() % 16];
  }
  // kBatch meta sets that answer only errors (q), then a no-op whose "MN" ends the batch.
  std::string batch() {
    std::string out;
    for (int i = 0; i < kBatch; ++i) {
      const std::size_t len = 10 + rng_() % 32;
      const std::size_t at = rng_() % (sizeof random_ - len);
      out += "ms fill:" + std::to_string(next_++) + " " + std::to_string(len) + " T" + ttl_s_ + " q\r\n";
      out.append(random_ + at, len);
      out += "\r\n";
    }
    return out + "mn\r\n";
  }
  static constexpr int kBatch = 256;

 private:
  std::string ttl_s_;
  std::mt19937_64 rng_;
  char random_[4096];
  std::uint64_t next_ = 0;
};

}  // namespace

std::vector<BackendOption> memcached_option_specs() {
  return {{"memory_mb", "item memory in MB (memcached -m), 2..65536", "64", {}},
          {"evict",
           "on: a full cache evicts the least recently used items, held locks too; off (-M): it refuses stores "
           "with SERVER_ERROR out of memory instead",
           "on",
           {"on", "off"}}};
}

MemcachedServerOptions MemcachedServerOptions::from_options(const BackendOptions& options) {
  MemcachedServerOptions o;
  o.memory_mb = option_number(options, "memcached", "memory_mb", 2, 65536);
  auto evict = options.find("evict");
  if (evict != options.end() && evict->second != "on" && evict->second != "off") {
    throw std::invalid_argument("memcached option evict must be on or off, got \"" + evict->second + "\"");
  }
  o.evict = evict == options.end() || evict->second == "on";
  return o;
}

MemcachedServer::MemcachedServer(MemcachedServerOptions options)
    : DaemonServer({"n1"}, options.ready_timeout), options_(options) {}

const MemcachedServer::Endpoint& MemcachedServer::endpoint(const std::string& node) const {
  return configured(endpoints_, node, "memcached");
}

void MemcachedServer::configure(Runtime& runtime, const std::string& node, const std::filesystem::path& dir) {
  endpoints_[node] = {runtime.node(node).address, runtime.port(node, "memcached", kMemcachedPort), dir};
}

ProcessSpec MemcachedServer::daemon(const std::string& node) const {
  const Endpoint& e = endpoint(node);
  ProcessSpec spec;
  spec.node = node;
  spec.name = "memcached";
  // -U 0: no UDP; -v: errors and warnings into the log.
  spec.argv = {"memcached", "-l", e.address, "-p", std::to_string(e.port), "-U", "0",
               "-m", std::to_string(options_.memory_mb), "-v"};
  if (!options_.evict) spec.argv.push_back("-M");
  if (::geteuid() == 0) spec.argv.insert(spec.argv.end(), {"-u", memcached_user()});
  spec.log = e.dir / "memcached.log";
  spec.cwd = e.dir;
  return spec;
}

bool MemcachedServer::ready(Runtime& runtime, const std::string& node) {
  const Endpoint& e = endpoint(node);
  return port_answers(runtime, node, e.address, e.port, [](const HostPort& t) {
    return memcached_answers_version(t.address, t.port, std::chrono::milliseconds(500));
  });
}

nlohmann::json MemcachedServer::client_config() const {
  const Endpoint& e = endpoint(nodes().front());
  return client_config_at({{e.address, e.port}});
}

nlohmann::json MemcachedServer::client_config_at(const std::vector<HostPort>& servers) const {
  if (servers.size() != 1) {
    throw std::invalid_argument("backend memcached takes one server, not " + std::to_string(servers.size()));
  }
  MemcachedClientConfig c;
  c.host = servers[0].address;
  c.port = servers[0].port;
  return c.to_json();
}

MemoryPressure MemcachedServer::press_memory(const std::string& node, const Deadline& deadline) {
  const Endpoint& e = endpoint(node);
  const HostPort t = runtime().probe_target(node, e.address, e.port);
  MemoryPressure result;
  runtime().run_in(node, [&] {
    // Each batch must answer well within a fault's action bound; the fill stops at the
    // deadline, and its items live a second past it (whole seconds, rounded up).
    MemcachedConnection conn(t.address, t.port, std::chrono::milliseconds(500), std::chrono::milliseconds(2000));
    const std::optional<std::int64_t> evictions_before = memcached_evictions(conn);
    MemcachedFiller filler(std::chrono::duration_cast<std::chrono::seconds>(deadline.left()) + std::chrono::seconds(2));
    while (!deadline.expired()) {
      std::int64_t refused = 0;
      MemcachedReply r = conn.request_until(filler.batch(), "MN", [&](const std::string&) { ++refused; });
      if (r.status != MemcachedReply::Status::kReply) {
        result.error = r.error;
        return;
      }
      result.refused += refused;
      result.stored += MemcachedFiller::kBatch - refused;
    }
    const std::optional<std::int64_t> evictions_after = memcached_evictions(conn);
    if (evictions_before && evictions_after) result.evictions = *evictions_after - *evictions_before;
  });
  return result;
}

}  // namespace fencecheck
