// What the runtimes share. NodeTableRuntime (every runtime): the node table, the node-name
// rules and the processes (a Supervisor). NamespacedRuntime (netns, docker): each node has
// a network namespace of its own; probes run inside it and partitions are iptables rules
// in it. Internal to platform/.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "platform/launch.h"
#include "platform/runtime.h"
#include "platform/supervisor.h"

namespace fencecheck {

class NodeTableRuntime : public Runtime {
 public:
  explicit NodeTableRuntime(RunState& state) : state_(state) {}

  const Node& node(std::string_view name) const override;
  const std::vector<Node>& nodes() const override { return nodes_; }

  void set_spec_decorator(SpecDecorator decorator) override;
  Process& spawn(ProcessSpec spec) override;
  Readiness await_ready(Process& p, const std::function<bool()>& ready, const Deadline& deadline) override;
  void set_interrupt_check(CancelCheck check) override;
  bool tcp_connects(std::string_view node, const std::string& address, std::uint16_t port,
                    std::chrono::milliseconds timeout) const override;
  std::vector<Process*> processes() const override;
  void stop_all(std::chrono::milliseconds grace) override;
  void record_scratch(const std::filesystem::path& dir) override;
  void forget_scratch(const std::filesystem::path& dir) override;
  void record_mount(const std::filesystem::path& dir) override;
  void forget_mount(const std::filesystem::path& dir) override;

 protected:
  // Throws HarnessError unless names are distinct, lowercase [a-z][a-z0-9]* of at most
  // 16 characters, not "hub", at most 250 of them, and create() was not called yet.
  void check_new_node_names(const std::vector<std::string>& names) const;
  // Stops every process (each given up to 2 s, or what is left of the deadline, to end
  // gracefully); the first step of destroy().
  void stop_processes(const Deadline& deadline) noexcept;
  // How a process enters node n before exec: nothing by default (the local runtime).
  virtual NodeEntry entry(const Node& n) const;
  // Starts a spec the decorator has seen: by default supervise(spec, entry(node)). The ssh
  // runtime turns it into a local ssh client that runs it on the node's host.
  virtual Process& start(ProcessSpec spec);
  // Starts spec as a supervised child of the controller, entering its node as `how` says.
  Process& supervise(const ProcessSpec& spec, const NodeEntry& how);
  // The run's interrupt check (set_interrupt_check), never null: for set-up steps' deadlines.
  CancelCheck interrupt_check() const;

  RunState& state_;
  std::vector<Node> nodes_;

 private:
  Supervisor& supervisor();
  mutable std::mutex mu_;  // decorator_, supervisor_, interrupted_
  SpecDecorator decorator_;
  CancelCheck interrupted_;
  std::unique_ptr<Supervisor> supervisor_;
};

// Runs jobs[0..n) each on its own thread and waits for all; then rethrows the first
// exception any job threw. For per-node actions that would take n times one node's time
// one after another (a container's start, a node's firewall swap).
void run_in_parallel(const std::vector<std::function<void()>>& jobs);
// Runs each node's job on its own thread and waits for all: the nodes whose job threw, each
// with its message. Each job must keep its own deadline (a cut's, a heal's).
NetFailures run_per_node(const std::map<std::string, std::function<void()>>& jobs);

class NamespacedRuntime : public NodeTableRuntime {
 public:
  using NodeTableRuntime::NodeTableRuntime;

  // fn on a short-lived thread inside the node's network namespace.
  void run_in(std::string_view node, const std::function<void()>& fn) const override;
  // Each node that drops packets gets an INPUT rule per source it drops (and, facing a
  // node outside the run's network, an OUTPUT rule per destination), swapped in whole
  // with iptables-restore run inside its namespace (nsenter): no moment with half a cut.
  // Nodes are set in parallel: about one node's change, ~20 ms; a node whose change failed
  // or did not finish by the deadline is returned with why (and rewritten next time).
  NetFailures cut(const Grudge& grudge, const Deadline& deadline) override;
  NetFailures heal(const Deadline& deadline) override;

 protected:
  // The file of node n's network namespace (/run/netns/<name>, /proc/<pid>/ns/net).
  virtual std::string netns_path(const Node& n) const = 0;
  // Forgets which nodes have rules (after their namespaces are gone).
  void forget_rules();
  // A node with no namespace of the run (a server the external runtime relays to): it
  // cannot drop packets itself, so a cut from it drops them on the other side, both ways.
  virtual bool outside(const Node&) const { return false; }
  // The first three octets of the run's private /24, "10.x.y.", derived from run_id (six
  // hex digits; HarnessError otherwise). Runs live in separate namespaces, so two on one
  // subnet could not collide; deriving it keeps their logs distinct.
  static std::string run_subnet(const std::string& run_id);

 private:
  struct Drops {
    std::vector<std::string> from;  // sources whose packets the node drops (INPUT)
    std::vector<std::string> to;    // destinations it sends nothing to (OUTPUT)
  };
  NetFailures apply_rules(const std::map<std::string, Drops>& drops, const Deadline& deadline);
  std::mutex rules_mu_;
  std::set<std::string> nodes_with_rules_;
};

// The factories runtime_registry.cpp calls, one per kind: each in its own file
// (<kind>_runtime.cpp).
std::unique_ptr<Runtime> make_local_runtime(RunState& state);
std::unique_ptr<Runtime> make_netns_runtime(const std::string& run_id, RunState& state);
// netns with the server nodes outside, relayed to `servers` (node n<i+1> to servers[i]).
std::unique_ptr<Runtime> make_external_runtime(const std::string& run_id, RunState& state,
                                               const std::vector<HostPort>& servers);
// Why no dockerd can be used (DOCKER_HOST not unix://, nothing answers), or nullopt.
std::optional<std::string> docker_unavailable();
std::unique_ptr<Runtime> make_docker_runtime(const std::string& run_id, RunState& state, const std::string& image,
                                             const std::string& socket);

}  // namespace fencecheck
