// The netns runtime: a hub namespace with a bridge, one namespace per node joined to it by
// a veth pair. Everything is made with iproute2 run *inside* our namespaces (`ip -n`), so
// the host's network namespace is never changed.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "platform/cleanup.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_base.h"

namespace fencecheck {

namespace {

// Partitions are iptables rules in each node's namespace. Debian 12 ships both back ends;
// we call one explicitly instead of relying on update-alternatives (host configuration).
std::string pick_iptables_restore(const std::string& probe_netns) {
  static std::mutex mu;
  static std::string chosen;
  std::lock_guard lock(mu);
  if (!chosen.empty()) return chosen;
  std::string tried;
  for (std::string tool : {"iptables-nft", "iptables-legacy"}) {
    if (!os::find_executable(tool)) continue;
    auto r = os::run_command({"ip", "netns", "exec", probe_netns, tool, "-w", "-S", "INPUT"});
    if (r.status == 0) return chosen = tool + "-restore";
    tried += "\n" + tool + ": " + r.output;
  }
  throw HarnessError("no working iptables for partitions (tried iptables-nft, iptables-legacy):" +
                     tried + "\ninstall the Debian package iptables (scripts/setup.sh)");
}

class NetnsRuntime final : public NodeTableRuntime {
 public:
  NetnsRuntime(std::string run_id, RunState& state)
      : NodeTableRuntime(state), run_id_(std::move(run_id)), hub_("fc-" + run_id_ + "-hub") {
    if (!RunState::valid_run_id(run_id_)) {
      throw HarnessError("bad run id '" + run_id_ + "': expected 6 lowercase hex digits");
    }
    // A private /24 per run. Each run's network lives only inside its own namespaces, so
    // even two runs on the same subnet could not collide; deriving it keeps logs distinct.
    unsigned long v = std::stoul(run_id_, nullptr, 16);
    subnet_ = "10." + std::to_string((v >> 16) & 0xff) + "." + std::to_string((v >> 8) & 0xff) + ".";
  }
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

  void run_in(std::string_view node_name, const std::function<void()>& fn) const override {
    const Node& n = node(node_name);
    int fd = ::open(("/run/netns/" + n.netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw HarnessError("cannot open namespace of node " + n.name + ": " +
                         os::strerror_string(errno));
    }
    // setns changes only the calling thread, so a throwaway thread keeps ours unchanged.
    std::exception_ptr failure;
    std::thread worker([&] {
      try {
        if (::setns(fd, CLONE_NEWNET) != 0) {
          throw HarnessError("cannot enter namespace of node " + n.name + ": " +
                             os::strerror_string(errno));
        }
        fn();
      } catch (...) {
        failure = std::current_exception();
      }
    });
    worker.join();
    ::close(fd);
    if (failure) std::rethrow_exception(failure);
  }

  bool supports_partitions() const override { return true; }

  void cut(const Grudge& grudge) override {
    std::map<std::string, std::vector<std::string>> drops;  // node -> sources to drop
    for (const auto& [name, sources] : grudge) {
      node(name);
      for (const auto& source : sources) {
        if (source != name) drops[name].push_back(node(source).address);
      }
    }
    apply_rules(drops);
  }

  void heal() override { apply_rules({}); }

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
    nodes_with_rules_.clear();
  }

 private:
  void record(const std::string& ns) {
    if (cleanup::netns_exists(ns)) {
      throw HarnessError("network namespace " + ns + " exists already: run `fencecheck clean`");
    }
    state_.add_netns(ns);
    recorded_.push_back(ns);
  }

  // Replaces the filter table of every node that has or had rules. iptables-restore swaps
  // the whole table at once, so there is no moment with half a partition on one node; the
  // nodes are set in parallel, so a cut takes about as long as one node's change (on a
  // loaded machine, one after another took over a second for eight nodes).
  void apply_rules(const std::map<std::string, std::vector<std::string>>& drops) {
    std::lock_guard lock(mu_);
    std::set<std::string> touch = nodes_with_rules_;
    for (const auto& [n, _] : drops) touch.insert(n);
    if (touch.empty()) return;
    std::string tool = pick_iptables_restore(node(*touch.begin()).netns);
    std::vector<std::thread> setters;
    std::mutex failed_mu;
    std::exception_ptr failed;
    for (const auto& name : touch) {
      std::string table = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n";
      auto it = drops.find(name);
      if (it != drops.end()) {
        for (const auto& source : it->second) table += "-A INPUT -s " + source + "/32 -j DROP\n";
      }
      table += "COMMIT\n";
      setters.emplace_back([&, name, table, ns = node(name).netns] {
        try {
          os::check_command({"ip", "netns", "exec", ns, tool, "-w"}, "setting firewall rules on node " + name, table);
        } catch (...) {
          std::lock_guard lock(failed_mu);
          if (!failed) failed = std::current_exception();
        }
      });
      if (it != drops.end()) nodes_with_rules_.insert(name);
      else nodes_with_rules_.erase(name);
    }
    for (auto& t : setters) t.join();
    if (failed) {
      nodes_with_rules_ = touch;  // unknown which took effect: the next change rewrites them all
      std::rethrow_exception(failed);
    }
  }

  std::string run_id_;
  std::string hub_;
  std::string subnet_;
  std::mutex mu_;
  std::set<std::string> nodes_with_rules_;
  std::vector<std::string> recorded_;  // namespaces recorded in state_, hub first
};

}  // namespace

std::unique_ptr<Runtime> make_netns_runtime(const std::string& run_id, RunState& state) {
  return std::make_unique<NetnsRuntime>(run_id, state);
}

}  // namespace fencecheck
