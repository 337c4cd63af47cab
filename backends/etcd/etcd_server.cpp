#include "backends/etcd/etcd_server.h"

#include <algorithm>
#include <stdexcept>

#include "backends/etcd/etcd_backend.h"
#include "backends/etcd/etcd_lock_client.h"
#include "backends/etcd/etcd_probe.h"
#include "platform/errors.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

std::string url(const std::string& address, std::uint16_t port) {
  return "http://" + address + ":" + std::to_string(port);
}

}  // namespace

std::vector<BackendOption> etcd_option_specs() {
  return {{"lock",
           "rpc: the v3lock Lock RPC (Jepsen's test); mutex: the clientv3/concurrency Mutex recipe, in C++",
           "rpc",
           {"rpc", "mutex"}},
          {"lease_ttl_s",
           "TTL of the lease each acquire takes (s), kept alive while held: a client silent that long "
           "loses its lock",
           "2",
           {}}};
}

std::vector<std::string> etcd_command_line(const std::string& program, const EtcdMember& self,
                                           const std::vector<EtcdMember>& members,
                                           const std::filesystem::path& data_dir) {
  std::string cluster;
  for (const EtcdMember& m : members) {
    cluster += (cluster.empty() ? "" : ",") + m.name + "=" + url(m.address, m.peer_port);
  }
  return {program,
          "--name=" + self.name,
          "--data-dir=" + data_dir.string(),
          "--listen-client-urls=" + url(self.address, self.client_port),
          "--advertise-client-urls=" + url(self.address, self.client_port),
          "--listen-peer-urls=" + url(self.address, self.peer_port),
          "--initial-advertise-peer-urls=" + url(self.address, self.peer_port),
          "--initial-cluster=" + cluster,
          // Ignored once the data directory holds a WAL: a restart rejoins as it was.
          "--initial-cluster-state=new",
          "--initial-cluster-token=fencecheck",
          "--logger=zap",
          "--log-outputs=stderr"};
}

EtcdServer::EtcdServer(const BackendOptions& options, std::vector<std::string> nodes)
    : DaemonServer(std::move(nodes), milliseconds(30000)) {
  auto lock = options.find("lock");
  lock_ = lock == options.end() ? "rpc" : lock->second;
  if (lock_ != "rpc" && lock_ != "mutex") {
    throw std::invalid_argument("etcd option lock must be rpc or mutex, got \"" + lock_ + "\"");
  }
  // etcd silently raises a TTL below its minimum (1.5 × the election timeout, rounded up: 2 s),
  // so a smaller one is refused here rather than run as something else.
  lease_ttl_s_ = options.count("lease_ttl_s") ? option_number(options, "etcd", "lease_ttl_s", 2, 3600) : 2;
}

const EtcdServer::Node& EtcdServer::node_of(const std::string& node) const {
  return configured(nodes_, node, "etcd");
}

void EtcdServer::configure(Runtime& runtime, const std::string& node, const std::filesystem::path& dir) {
  if (program_.empty()) {
    if (auto missing = missing_binary_message(etcd_backend_info())) throw HarnessError("etcd: " + *missing);
    program_ = *find_binary(etcd_backend_info().binaries.front());
  }
  // Every member's command line lists the whole cluster; Runtime::port is stable, so the
  // other nodes' ports asked for here are what their own configure() will use.
  if (members_.empty()) {
    for (const std::string& n : nodes()) {
      members_.push_back({n, runtime.node(n).address, runtime.port(n, "etcd-client", 2379),
                          runtime.port(n, "etcd-peer", 2380)});
    }
  }
  auto self = std::find_if(members_.begin(), members_.end(), [&](const EtcdMember& m) { return m.name == node; });
  if (self == members_.end()) throw HarnessError("etcd: " + node + " is not a member of this cluster");
  // etcd makes the data directory itself (mode 0700) on its first start.
  nodes_[node] = Node{*self, dir};
}

ProcessSpec EtcdServer::daemon(const std::string& node) const {
  const Node& n = node_of(node);
  ProcessSpec spec;
  spec.node = node;
  spec.name = "etcd";
  spec.argv = etcd_command_line(program_, n.member, members_, n.dir / "data");
  spec.log = n.dir / "etcd.log";
  spec.cwd = n.dir;
  return spec;
}

bool EtcdServer::ready(Runtime& runtime, const std::string& node) {
  const EtcdMember& m = node_of(node).member;
  bool healthy = false;
  const HostPort t = runtime.probe_target(node, m.address, m.client_port);
  runtime.run_in(node, [&] { healthy = etcd_healthy(t.address, t.port, milliseconds(500)); });
  return healthy;
}

std::optional<std::string> EtcdServer::leader() {
  std::optional<std::string> best;
  std::int64_t best_term = -1;
  for (const auto& node : answering_nodes()) {
    const EtcdMember& m = node_of(node).member;
    std::optional<EtcdMemberStatus> status;
    const HostPort t = runtime().probe_target(node, m.address, m.client_port);
    runtime().run_in(node, [&] { status = etcd_member_status(t.address, t.port, milliseconds(500)); });
    if (status && status->is_leader() && status->raft_term > best_term) {
      best = node;
      best_term = status->raft_term;
    }
  }
  return best;
}

nlohmann::json EtcdServer::client_config() const {
  std::vector<HostPort> members;
  for (const auto& node : nodes()) members.push_back({node_of(node).member.address, node_of(node).member.client_port});
  return client_config_at(members);
}

nlohmann::json EtcdServer::client_config_at(const std::vector<HostPort>& servers) const {
  if (servers.empty()) throw std::invalid_argument("backend etcd needs at least one server");
  EtcdClientConfig c;
  for (const HostPort& s : servers) c.endpoints.push_back(s.address + ":" + std::to_string(s.port));
  c.lock = lock_;
  c.lease_ttl = std::chrono::seconds(lease_ttl_s_);
  return c.to_json();
}

}  // namespace fencecheck
