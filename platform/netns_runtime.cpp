// The netns runtime (netns_runtime.h). Everything is made inside our namespaces, with
// iproute2 (`ip -n`) or, for the nodes' own interfaces, rtnetlink from a thread that
// entered them (netlink.h), so the host's network namespace is never changed.
#include "platform/netns_runtime.h"

#include <iostream>
#include <algorithm>

#include "platform/cleanup.h"
#include "platform/netlink.h"
#include "platform/os_util.h"
#include "platform/run_state.h"

namespace fencecheck {

namespace {
// The kernel brings a new link up within about a second (netlink.h); five allow for a
// machine busy with other runs.
constexpr std::chrono::seconds kLinkUpTimeout{5};
}  // namespace

NetnsRuntime::NetnsRuntime(std::string run_id, RunState& state)
    : NamespacedRuntime(state), run_id_(std::move(run_id)), hub_("fc-" + run_id_ + "-hub"), subnet_(run_subnet(run_id_)) {}

void NetnsRuntime::create(const std::vector<std::string>& node_names) {
  check_new_node_names(node_names);
  const std::vector<std::string> servers = outside_nodes(node_names);
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
    const std::string veth = veth_name(i);
    hub_batch += "link add " + veth + " type veth peer name eth0 netns " + planned[i].netns + "\n";
    hub_batch += "link set " + veth + " master br0 up\n";
  }
  os::check_command({"ip", "-n", hub_, "-batch", "-"}, "building the bridge in " + hub_, hub_batch);
  std::vector<NodeInterface> interfaces;
  std::vector<NetnsLink> links;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const Node& n = planned[i];
    if (outside(n)) continue;
    interfaces.push_back({n.name, netns_path(n), "eth0", n.address, 24});
    links.push_back({n.name, netns_path(n), "eth0"});
    links.push_back({n.name, "/run/netns/" + hub_, veth_name(i)});
  }
  configure_node_interfaces(interfaces);
  await_links_up(links, Deadline::after(kLinkUpTimeout));
  nodes_ = std::move(planned);
  created();
}

std::string NetnsRuntime::veth_name(std::size_t node_index) const {
  return "v" + run_id_ + std::to_string(node_index);  // at most 10 chars, unique per run
}

std::uint16_t NetnsRuntime::port(std::string_view node_name, std::string_view, std::uint16_t preferred) {
  node(node_name);
  return preferred;
}

void NetnsRuntime::destroy(const Deadline& deadline) noexcept {
  stop_processes(deadline);
  removing_network();
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

NodeEntry NetnsRuntime::entry(const Node& n) const {
  if (outside(n)) throw HarnessError("node " + n.name + " is a server the run does not manage: nothing runs on it");
  return {{netns_path(n)}, {}, {}, {}};
}

void NetnsRuntime::record(const std::string& ns) {
  if (cleanup::netns_exists(ns)) {
    throw HarnessError("network namespace " + ns + " exists already: run `fencecheck clean`");
  }
  state_.add_netns(ns);
  recorded_.push_back(ns);
}

std::unique_ptr<Runtime> make_netns_runtime(const std::string& run_id, RunState& state) {
  return std::make_unique<NetnsRuntime>(run_id, state);
}

}  // namespace fencecheck
