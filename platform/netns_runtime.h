// The netns runtime (netns_runtime.cpp): a hub namespace with a bridge, one namespace per
// node joined to it by a veth pair, a private /24 derived from the run id. The external
// runtime (external_runtime.cpp) is the same with some server nodes outside the run: they
// have no namespace, only an address on the hub's bridge. Internal to platform/; the run
// makes either through runtime_registry.h. Thread safety and ownership as Runtime's.
#pragma once

#include <string>
#include <vector>

#include "platform/runtime_base.h"

namespace fencecheck {

class NetnsRuntime : public NamespacedRuntime {
 public:
  NetnsRuntime(std::string run_id, RunState& state);
  ~NetnsRuntime() override { Runtime::destroy(); }

  std::string_view kind() const override { return "netns"; }
  // Blocks while `ip` builds the namespaces and the bridge (about 10 ms a node).
  void create(const std::vector<std::string>& node_names) override;
  std::uint16_t port(std::string_view node_name, std::string_view, std::uint16_t preferred) override;
  // Everything here is this machine's: only the processes' stops can wait.
  void destroy(const Deadline& deadline) noexcept override;

 protected:
  // The nodes of node_names create() gives no namespace (none here); throws HarnessError
  // when node_names lacks one it must have.
  virtual std::vector<std::string> outside_nodes(const std::vector<std::string>& node_names) const {
    (void)node_names;
    return {};
  }
  // Called once create() has made the network and the node table.
  virtual void created() {}
  // Called by destroy() once the processes are stopped, before the network is removed.
  virtual void removing_network() noexcept {}
  // The hub namespace's name ("fc-<run id>-hub"), where a node outside is reached.
  const std::string& hub() const { return hub_; }

  // A server outside is reached from the hub: a probe "from" it runs there.
  std::string netns_path(const Node& n) const override { return "/run/netns/" + (outside(n) ? hub_ : n.netns); }
  NodeEntry entry(const Node& n) const override;
  bool outside(const Node& n) const override { return n.netns.empty(); }

 private:
  void record(const std::string& ns);
  // The hub's end of the veth pair of the node_index-th node.
  std::string veth_name(std::size_t node_index) const;

  std::string run_id_;
  std::string hub_;
  std::string subnet_;
  std::vector<std::string> recorded_;  // namespaces recorded in state_, hub first
};

}  // namespace fencecheck
