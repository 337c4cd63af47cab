// The netns runtime: a hub namespace with a bridge, one namespace per node joined to it by
// a veth pair. Everything is made inside our namespaces, with iproute2 (`ip -n`) or, for
// the nodes' own interfaces, rtnetlink from a thread that entered them (netlink.h), so the
// host's network namespace is never changed.
//
// The external runtime is the same with servers outside: each server node the user runs
// (an --endpoints entry) has no namespace, only an address on the hub's bridge where a
// TcpRelay of the controller listens and carries the nodes' connections to the server.
#include <iostream>
#include <algorithm>
#include <list>

#include "platform/cleanup.h"
#include "platform/netlink.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_base.h"
#include "platform/tcp_relay.h"

namespace fencecheck {

namespace {

class NetnsRuntime final : public NamespacedRuntime {
 public:
  // outside: the servers of the external runtime, node n<i+1> at outside[i]; empty for netns.
  NetnsRuntime(std::string run_id, RunState& state, std::vector<HostPort> outside)
      : NamespacedRuntime(state),
        run_id_(std::move(run_id)),
        hub_("fc-" + run_id_ + "-hub"),
        subnet_(run_subnet(run_id_)),
        outside_(std::move(outside)) {}
  ~NetnsRuntime() override { destroy(); }

  std::string_view kind() const override { return outside_.empty() ? "netns" : "external"; }

  void create(const std::vector<std::string>& node_names) override {
    check_new_node_names(node_names);
    const std::vector<std::string> servers = outside_server_nodes(outside_.size());
    for (const auto& s : servers) {
      if (std::find(node_names.begin(), node_names.end(), s) == node_names.end()) {
        throw HarnessError("the external runtime relays to " + std::to_string(servers.size()) +
                           " server(s), but the run has no node " + s);
      }
    }
    auto is_outside = [&](const std::string& name) {
      return std::find(servers.begin(), servers.end(), name) != servers.end();
    };
    std::vector<Node> planned;
    for (std::size_t i = 0; i < node_names.size(); ++i) {
      planned.push_back({node_names[i], subnet_ + std::to_string(i + 1),
                         is_outside(node_names[i]) ? "" : "fc-" + run_id_ + "-" + node_names[i]});
    }
    std::string add_batch = "netns add " + hub_ + "\n";
    record(hub_);
    for (const auto& n : planned) {
      if (outside(n)) continue;
      record(n.netns);
      add_batch += "netns add " + n.netns + "\n";
    }
    os::check_command({"ip", "-batch", "-"}, "creating the run's network namespaces", add_batch);

    std::string hub_batch = "link set lo up\nlink add br0 type bridge\nlink set br0 up\n";
    for (std::size_t i = 0; i < planned.size(); ++i) {
      if (outside(planned[i])) {  // the relay's address, on the bridge itself
        hub_batch += "addr add " + planned[i].address + "/24 dev br0\n";
        continue;
      }
      std::string veth = "v" + run_id_ + std::to_string(i);  // at most 10 chars, unique per run
      hub_batch += "link add " + veth + " type veth peer name eth0 netns " + planned[i].netns + "\n";
      hub_batch += "link set " + veth + " master br0 up\n";
    }
    os::check_command({"ip", "-n", hub_, "-batch", "-"}, "building the bridge in " + hub_,
                      hub_batch);
    std::vector<NodeInterface> interfaces;
    for (const auto& n : planned) {
      if (!outside(n)) interfaces.push_back({n.name, netns_path(n), "eth0", n.address, 24});
    }
    configure_node_interfaces(interfaces);
    nodes_ = std::move(planned);
    for (std::size_t i = 0; i < servers.size(); ++i) {
      const HostPort& target = outside_[i];
      relays_.emplace_back(listen_in_namespace("/run/netns/" + hub_, node(servers[i]).address, target.port),
                           target.address, target.port);
    }
  }

  std::uint16_t port(std::string_view node_name, std::string_view, std::uint16_t preferred) override {
    node(node_name);
    return preferred;
  }

  void destroy() noexcept override {
    stop_processes();
    relays_.clear();  // each stops and joins its threads
    // Node namespaces first: deleting one deletes its veth pair, both ends.
    for (auto it = recorded_.rbegin(); it != recorded_.rend(); ++it) {
      const std::string& ns = *it;
      try {
        cleanup::delete_netns(ns);
        state_.remove_netns(ns);
      } catch (const std::exception& e) {
        std::cerr << "fencecheck: warning: " << e.what() << " (run `fencecheck clean`)\n";
      }
    }
    recorded_.clear();
    forget_rules();
  }

 protected:
  // A server outside is reached from the hub, where its relay listens: a probe "from" it
  // runs there.
  std::string netns_path(const Node& n) const override { return "/run/netns/" + (outside(n) ? hub_ : n.netns); }
  NodeEntry entry(const Node& n) const override {
    if (outside(n)) throw HarnessError("node " + n.name + " is a server the run does not manage: nothing runs on it");
    return {{netns_path(n)}, {}, {}, {}};
  }
  bool outside(const Node& n) const override { return n.netns.empty(); }

 private:
  void record(const std::string& ns) {
    if (cleanup::netns_exists(ns)) {
      throw HarnessError("network namespace " + ns + " exists already: run `fencecheck clean`");
    }
    state_.add_netns(ns);
    recorded_.push_back(ns);
  }

  std::string run_id_;
  std::string hub_;
  std::string subnet_;
  std::vector<std::string> recorded_;  // namespaces recorded in state_, hub first
  std::vector<HostPort> outside_;
  std::list<TcpRelay> relays_;
};

}  // namespace

std::unique_ptr<Runtime> make_netns_runtime(const std::string& run_id, RunState& state) {
  return std::make_unique<NetnsRuntime>(run_id, state, std::vector<HostPort>{});
}

std::unique_ptr<Runtime> make_external_runtime(const std::string& run_id, RunState& state,
                                               const std::vector<HostPort>& servers) {
  if (servers.empty()) throw HarnessError("the external runtime needs at least one server endpoint");
  return std::make_unique<NetnsRuntime>(run_id, state, servers);
}

}  // namespace fencecheck
