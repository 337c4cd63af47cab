// The netns runtime: a hub namespace with a bridge, one namespace per node joined to it by
// a veth pair. Everything is made with iproute2 run *inside* our namespaces (`ip -n`), so
// the host's network namespace is never changed.
#include <iostream>

#include "platform/cleanup.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_base.h"

namespace fencecheck {

namespace {

class NetnsRuntime final : public NamespacedRuntime {
 public:
  NetnsRuntime(std::string run_id, RunState& state)
      : NamespacedRuntime(state),
        run_id_(std::move(run_id)),
        hub_("fc-" + run_id_ + "-hub"),
        subnet_(run_subnet(run_id_)) {}
  ~NetnsRuntime() override { destroy(); }

  std::string_view kind() const override { return "netns"; }

  void create(const std::vector<std::string>& node_names) override {
    check_new_node_names(node_names);
    std::vector<Node> planned;
    for (std::size_t i = 0; i < node_names.size(); ++i) {
      planned.push_back({node_names[i], subnet_ + std::to_string(i + 1),
                         "fc-" + run_id_ + "-" + node_names[i]});
    }
    std::string add_batch = "netns add " + hub_ + "\n";
    record(hub_);
    for (const auto& n : planned) {
      record(n.netns);
      add_batch += "netns add " + n.netns + "\n";
    }
    os::check_command({"ip", "-batch", "-"}, "creating the run's network namespaces", add_batch);

    std::string hub_batch = "link set lo up\nlink add br0 type bridge\nlink set br0 up\n";
    for (std::size_t i = 0; i < planned.size(); ++i) {
      std::string veth = "v" + run_id_ + std::to_string(i);  // at most 10 chars, unique per run
      hub_batch += "link add " + veth + " type veth peer name eth0 netns " + planned[i].netns + "\n";
      hub_batch += "link set " + veth + " master br0 up\n";
    }
    os::check_command({"ip", "-n", hub_, "-batch", "-"}, "building the bridge in " + hub_,
                      hub_batch);
    for (const auto& n : planned) {
      os::check_command({"ip", "-n", n.netns, "-batch", "-"}, "configuring node " + n.name,
                        "link set lo up\naddr add " + n.address + "/24 dev eth0\nlink set eth0 up\n");
    }
    nodes_ = std::move(planned);
  }

  std::uint16_t port(std::string_view node_name, std::string_view, std::uint16_t preferred) override {
    node(node_name);
    return preferred;
  }

  void destroy() noexcept override {
    stop_processes();
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
  std::string netns_path(const Node& n) const override { return "/run/netns/" + n.netns; }
  NodeEntry entry(const Node& n) const override { return {{netns_path(n)}, {}, {}, {}}; }

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
};

}  // namespace

std::unique_ptr<Runtime> make_netns_runtime(const std::string& run_id, RunState& state) {
  return std::make_unique<NetnsRuntime>(run_id, state);
}

}  // namespace fencecheck
