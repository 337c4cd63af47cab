// What the netns and docker runtimes share: each node has its own network namespace, named
// by a file. Probes run on a thread that entered it; partitions are iptables rules inside
// it, set by the host's iptables run under nsenter. The host's own namespace is never changed.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <thread>

#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_base.h"
#include "platform/unique_fd.h"

namespace fencecheck {

namespace {

// The command that runs argv inside the network namespace at path.
std::vector<std::string> in_namespace(const std::string& path, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"nsenter", "--net=" + path, "--"});
  return argv;
}

// Debian 12 ships both iptables back ends; we call one explicitly instead of relying on
// update-alternatives (host configuration). Chosen once per process, probed in a node.
std::string pick_iptables_restore(const std::string& probe_netns_path) {
  static std::mutex mu;
  static std::string chosen;
  std::lock_guard lock(mu);
  if (!chosen.empty()) return chosen;
  std::string tried;
  for (std::string tool : {"iptables-nft", "iptables-legacy"}) {
    if (!os::find_executable(tool)) continue;
    auto r = os::run_command(in_namespace(probe_netns_path, {tool, "-w", "-S", "INPUT"}));
    if (r.status == 0) return chosen = tool + "-restore";
    tried += "\n" + tool + ": " + r.output;
  }
  throw HarnessError("no working iptables for partitions (tried iptables-nft, iptables-legacy):" + tried +
                     "\ninstall the Debian package iptables (scripts/setup.sh)");
}

}  // namespace

void run_in_parallel(const std::vector<std::function<void()>>& jobs) {
  std::vector<std::thread> threads;
  std::mutex failed_mu;
  std::exception_ptr failed;
  for (const auto& job : jobs) {
    threads.emplace_back([&] {
      try {
        job();
      } catch (...) {
        std::lock_guard lock(failed_mu);
        if (!failed) failed = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failed) std::rethrow_exception(failed);
}

NetFailures run_per_node(const std::map<std::string, std::function<void()>>& jobs) {
  std::mutex mu;
  NetFailures failures;
  std::vector<std::thread> threads;
  for (const auto& [node, job] : jobs) {
    threads.emplace_back([&, &node = node, &job = job] {
      try {
        job();
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        failures[node] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return failures;
}

void NamespacedRuntime::run_in(std::string_view node_name, const std::function<void()>& fn) const {
  const Node& n = node(node_name);
  const std::string path = netns_path(n);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    throw HarnessError("cannot open the network namespace of node " + n.name + " (" + path +
                       "): " + os::strerror_string(errno));
  }
  // setns changes only the calling thread, so a throwaway thread keeps ours unchanged.
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      if (::setns(fd.get(), CLONE_NEWNET) != 0) {
        throw HarnessError("cannot enter the network namespace of node " + n.name + ": " +
                           os::strerror_string(errno));
      }
      fn();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  worker.join();
  if (failure) std::rethrow_exception(failure);
}

NetFailures NamespacedRuntime::cut(const Grudge& grudge, const Deadline& deadline) {
  std::map<std::string, Drops> drops;
  for (const auto& [name, sources] : grudge) {
    const Node& n = node(name);
    for (const auto& source : sources) {
      if (source == name) continue;
      const Node& s = node(source);
      if (!outside(n)) {
        drops[name].from.push_back(s.address);
      } else if (!outside(s)) {
        drops[source].to.push_back(n.address);  // a node outside drops nothing: its peer stops sending
      } else {
        throw HarnessError("cannot cut " + name + " from " + source +
                           ": neither runs in the run's network (servers the run does not manage)");
      }
    }
  }
  return apply_rules(drops, deadline);
}

NetFailures NamespacedRuntime::heal(const Deadline& deadline) { return apply_rules({}, deadline); }

std::string NamespacedRuntime::run_subnet(const std::string& run_id) {
  if (!RunState::valid_run_id(run_id)) {
    throw HarnessError("bad run id '" + run_id + "': expected 6 lowercase hex digits");
  }
  unsigned long v = std::stoul(run_id, nullptr, 16);
  return "10." + std::to_string((v >> 16) & 0xff) + "." + std::to_string((v >> 8) & 0xff) + ".";
}

void NamespacedRuntime::forget_rules() {
  std::lock_guard lock(rules_mu_);
  nodes_with_rules_.clear();
}

// Replaces the filter table of every node that has or had rules. The nodes are set in
// parallel: on a loaded machine, one after another took over a second for eight nodes.
NetFailures NamespacedRuntime::apply_rules(const std::map<std::string, Drops>& drops, const Deadline& deadline) {
  std::lock_guard lock(rules_mu_);
  std::set<std::string> touch = nodes_with_rules_;
  for (const auto& [n, _] : drops) touch.insert(n);
  if (touch.empty()) return {};
  std::string tool = pick_iptables_restore(netns_path(node(*touch.begin())));
  std::map<std::string, std::function<void()>> setters;
  for (const auto& name : touch) {
    std::string table = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n";
    auto it = drops.find(name);
    if (it != drops.end()) {
      for (const auto& source : it->second.from) table += "-A INPUT -s " + source + "/32 -j DROP\n";
      for (const auto& dest : it->second.to) table += "-A OUTPUT -d " + dest + "/32 -j DROP\n";
    }
    table += "COMMIT\n";
    setters[name] = [&tool, &deadline, name, table, path = netns_path(node(name))] {
      os::CommandResult r = os::run_command(in_namespace(path, {tool, "-w"}), table, deadline);
      if (r.timed_out) throw HarnessError("its firewall did not change within " + deadline.budget_text());
      if (r.status != 0) throw HarnessError(tool + " exited with " + std::to_string(r.status) + ": " + r.output);
    };
    if (it != drops.end()) nodes_with_rules_.insert(name);
    else nodes_with_rules_.erase(name);
  }
  NetFailures failures = run_per_node(setters);
  // Unknown whether a failed change took effect: the next change rewrites those nodes.
  for (const auto& [name, _] : failures) nodes_with_rules_.insert(name);
  return failures;
}

}  // namespace fencecheck
