#include "backends/nats/nats_server.h"

#include <stdexcept>
#include <thread>

#include "backends/nats/nats_backend.h"
#include "backends/nats/nats_lock_client.h"
#include "platform/atomic_file.h"
#include "platform/errors.h"
#include "platform/tcp.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

std::string host_port(const std::string& address, std::uint16_t port) {
  return address + ":" + std::to_string(port);
}

}  // namespace

std::vector<BackendOption> nats_option_specs() {
  return {{"servers", "3: a JetStream cluster of three servers, the bucket replicated on all; 1: one server", "3",
           {"3", "1"}},
          {"max_age_ms",
           "the bucket's max age (ms), 100..86400000: how long a lock key lives — the lease; nats-server 2.9 has no "
           "per-key TTL, so --ttl-ms does not change it",
           "2000",
           {}},
          {"crash_loses",
           "nothing: a kill is a crash of the process (the kernel keeps what it wrote); unsynced: a kill is a power "
           "failure of the node, which loses every write not fsynced for writeback_ms (fclazydisk; local or netns, "
           "root)",
           "nothing",
           {"nothing", "unsynced"}},
          {"writeback_ms",
           "with crash_loses=unsynced: how old an unsynced write is before the node's disk writes it back and a "
           "power failure no longer loses it (the kernel's dirty_expire: 30000), 0: never",
           "5000",
           {}}};
}

NatsServerOptions NatsServerOptions::from_options(const BackendOptions& options) {
  NatsServerOptions o;
  o.servers = static_cast<int>(option_number(options, "nats", "servers", 1, 3));
  if (o.servers != 1 && o.servers != 3) throw std::invalid_argument("nats option servers must be 3 or 1");
  o.max_age = milliseconds(option_number(options, "nats", "max_age_ms", 100, 86400000));
  auto loses = options.find("crash_loses");
  o.crash_loses_unsynced = loses != options.end() && loses->second == "unsynced";
  if (options.count("writeback_ms")) o.writeback = milliseconds(option_number(options, "nats", "writeback_ms", 0, 3600000));
  return o;
}

NatsBucket NatsServerOptions::bucket() const {
  NatsBucket b;
  b.max_age = max_age;
  b.replicas = servers;
  return b;
}

std::string nats_config(const NatsNode& self, const std::vector<NatsNode>& cluster,
                        const std::filesystem::path& store_dir) {
  std::string c = "server_name: " + self.name + "\n" +                            //
                  "listen: \"" + host_port(self.address, self.client_port) + "\"\n" +  //
                  "http: \"" + host_port(self.address, self.http_port) + "\"\n" +      //
                  "jetstream {\n  store_dir: \"" + store_dir.string() + "\"\n}\n";
  if (cluster.size() > 1) {
    std::string routes;
    for (const NatsNode& n : cluster) {
      if (n.name == self.name) continue;
      routes += std::string(routes.empty() ? "" : ", ") + "\"nats-route://" + host_port(n.address, n.cluster_port) + "\"";
    }
    c += "cluster {\n  name: fencecheck\n  listen: \"" + host_port(self.address, self.cluster_port) +
         "\"\n  routes: [" + routes + "]\n}\n";
  }
  return c;
}

bool nats_jsz_ready(const std::string& body, bool clustered) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("config")) return false;  // JetStream off or not yet on
  if (!clustered) return true;
  const nlohmann::json meta = j.value("meta_cluster", nlohmann::json::object());
  return meta.is_object() && meta.value("leader", nlohmann::json("")).is_string() &&
         !meta.value("leader", std::string()).empty();
}

std::string nats_jsz_stream_leader(const std::string& body, const std::string& stream) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("account_details") || !j["account_details"].is_array()) return "";
  for (const auto& account : j["account_details"]) {
    if (!account.is_object() || !account.contains("stream_detail") || !account["stream_detail"].is_array()) continue;
    for (const auto& s : account["stream_detail"]) {
      if (!s.is_object() || s.value("name", nlohmann::json("")) != stream) continue;
      const nlohmann::json cluster = s.value("cluster", nlohmann::json::object());
      if (cluster.is_object() && cluster.value("leader", nlohmann::json("")).is_string()) {
        return cluster.value("leader", std::string());
      }
    }
  }
  return "";
}

NatsServer::NatsServer(NatsServerOptions options)
    : DaemonServer(options.servers == 1 ? std::vector<std::string>{"n1"} : std::vector<std::string>{"n1", "n2", "n3"},
                   options.ready_timeout),
      options_(options),
      disks_(options.crash_loses_unsynced ? std::make_unique<LazyDisks>(options.writeback) : nullptr) {}

const NatsServer::Node& NatsServer::node_of(const std::string& node) const { return configured(nodes_, node, "nats"); }

void NatsServer::configure(Runtime& runtime, const std::string& node, const std::filesystem::path& dir) {
  if (program_.empty()) {  // looked up once, as etcd does: a restart spawns the same program
    if (auto missing = missing_binary_message(nats_backend_info())) throw HarnessError("nats: " + *missing);
    program_ = *find_binary(nats_backend_info().binaries.front());
  }
  if (disks_) {
    if (auto why = LazyDisks::unsupported(runtime)) throw HarnessError("nats: crash_loses=unsynced: " + *why);
  }
  // Every node's config lists the others' routes; Runtime::port is stable, so the ports
  // asked for here are what their own configure() will use.
  if (cluster_.empty()) {
    for (const std::string& n : nodes()) {
      cluster_.push_back({n, runtime.node(n).address, runtime.port(n, "nats-client", 4222),
                          runtime.port(n, "nats-cluster", 6222), runtime.port(n, "nats-http", 8222)});
    }
  }
  auto self = std::find_if(cluster_.begin(), cluster_.end(), [&](const NatsNode& n) { return n.name == node; });
  if (self == cluster_.end()) throw HarnessError("nats: " + node + " is not a node of this cluster");
  const std::filesystem::path config = dir / "nats.conf";
  try {
    write_file_atomically(config, nats_config(*self, cluster_, dir / "store"));
  } catch (const std::exception& e) {
    throw HarnessError("nats: cannot write " + config.string() + ": " + e.what());
  }
  nodes_[node] = Node{*self, dir};
}

ProcessSpec NatsServer::daemon(const std::string& node) const {
  const Node& n = node_of(node);
  ProcessSpec spec;
  spec.node = node;
  spec.name = "nats-server";
  spec.argv = {program_, "-c", (n.dir / "nats.conf").string()};
  spec.log = n.dir / "nats.log";
  spec.cwd = n.dir;
  return spec;
}

void NatsServer::launch(const std::string& node) {
  if (disks_) {
    const std::filesystem::path& dir = node_of(node).dir;
    disks_->mount(runtime(), node, dir / "disk", dir / "store", Deadline::after(milliseconds(10000)));
  }
  DaemonServer::launch(node);
}

void NatsServer::kill(const std::string& node, const Deadline& deadline) {
  DaemonServer::kill(node, deadline);
  if (disks_) disks_->crash(runtime(), node, deadline);
}

void NatsServer::teardown(const Deadline& deadline) noexcept {
  DaemonServer::teardown(deadline);
  if (!disks_) return;
  try {
    disks_->stop_all(runtime());
  } catch (const HarnessError&) {  // never set up: no disk was mounted
  }
}

std::optional<std::string> NatsServer::jsz(Runtime& runtime, const std::string& node, const std::string& query) {
  const NatsNode& self = node_of(node).self;
  const HostPort t = runtime.probe_target(node, self.address, self.http_port);
  std::optional<std::string> body;
  runtime.run_in(node, [&] { body = http_get_ok_body(t.address, t.port, "/jsz" + query, milliseconds(500)); });
  return body;
}

bool NatsServer::ready(Runtime& runtime, const std::string& node) {
  std::optional<std::string> body = jsz(runtime, node, "");
  return body && nats_jsz_ready(*body, nodes().size() > 1);
}

void NatsServer::setup(Runtime& runtime, const std::filesystem::path& nodes_dir) {
  DaemonServer::setup(runtime, nodes_dir);
  make_bucket(runtime, nodes_dir / nodes().front() / "nats.log");
}

void NatsServer::make_bucket(Runtime& runtime, const std::filesystem::path& log) {
  const NatsBucket bucket = options_.bucket();
  const std::string& first = nodes().front();
  const NatsNode& self = node_of(first).self;
  const HostPort t = runtime.probe_target(first, self.address, self.client_port);
  const auto deadline = std::chrono::steady_clock::now() + options_.ready_timeout;
  std::string last_error;
  runtime.run_in(first, [&] {
    NatsConnection conn({host_port(t.address, t.port)}, "fencecheck-setup", milliseconds(1000), milliseconds(2000));
    bool made = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!made) {
        NatsReply r = conn.make_bucket(bucket);
        made = r.ok();
        if (!made) last_error = "making bucket " + bucket.name + ": " + r.error;
      }
      if (made) {
        NatsStreamState state;
        NatsReply r = conn.stream_state(bucket.stream(), &state);
        const bool current = bucket.replicas == 1 || (!state.leader.empty() && state.behind.empty() &&
                                                       state.followers.size() + 1 ==
                                                           static_cast<std::size_t>(bucket.replicas));
        if (r.ok() && current) {
          last_error.clear();
          return;
        }
        last_error = r.ok() ? "stream " + bucket.stream() + " not current yet (leader \"" + state.leader + "\", " +
                                  std::to_string(state.behind.size()) + " replicas behind)"
                            : "stream info: " + r.error;
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  if (!last_error.empty()) {
    note_setup(log, last_error);
    throw HarnessError("nats: the lock bucket was not ready within " +
                       std::to_string(options_.ready_timeout.count()) + " ms: " + last_error);
  }
}

std::optional<std::string> NatsServer::leader() {
  const std::string stream = options_.bucket().stream();
  for (const auto& node : answering_nodes()) {
    std::optional<std::string> body = jsz(runtime(), node, "?accounts=true&streams=true");
    if (body && nats_jsz_stream_leader(*body, stream) == node) return node;
  }
  return std::nullopt;
}

nlohmann::json NatsServer::client_config() const {
  std::vector<HostPort> servers;
  for (const auto& node : nodes()) servers.push_back({node_of(node).self.address, node_of(node).self.client_port});
  return client_config_at(servers);
}

nlohmann::json NatsServer::client_config_at(const std::vector<HostPort>& servers) const {
  if (servers.empty()) throw std::invalid_argument("backend nats needs at least one server");
  NatsClientConfig c;
  for (const HostPort& s : servers) c.servers.push_back(host_port(s.address, s.port));
  c.bucket = options_.bucket();
  c.bucket.replicas = std::min<int>(c.bucket.replicas, static_cast<int>(servers.size()));
  return c.to_json();
}

}  // namespace fencecheck
