// The Runtime role: makes the nodes of one run and the network between them.
//
// A node is a host of the test: servers n1..nN, the resource node r1, clients c1..cK.
// `netns` (root only): a hub network namespace with a bridge, one namespace per node joined
// to it by a veth pair, a private /24 derived from the run id. `local`: every node is
// 127.0.0.1 and services get distinct ports; partitions are unavailable.
// Every namespace and rule a Runtime makes is recorded in the RunState before it exists,
// so that `fencecheck clean` can remove it after a crash. The host's own network namespace
// is never changed (everything is made with `ip -n <our namespace>`). create() and destroy()
// are not thread-safe; after create() the other methods are. Errors throw HarnessError
// with a message that says what failed and what to do.
//
// netns details: namespaces `fc-<run_id>-hub` (bridge br0) and `fc-<run_id>-<node>` (eth0,
// address 10.X.Y.<index+1>/24 with X.Y from the run id); partitions are iptables DROP rules
// on INPUT in the nodes' namespaces (iptables-nft, else iptables-legacy). create+destroy of
// 8 nodes takes ~65 ms.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "platform/errors.h"

namespace fencecheck {

class RunState;

struct Node {
  std::string name;     // "n1", "r1", "c3"
  std::string address;  // IPv4 address servers on this node bind to / clients dial
  std::string netns;    // network namespace name; empty under the local runtime
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual std::string_view kind() const = 0;  // "netns" or "local"

  // Creates the network and one node per name (lowercase [a-z][a-z0-9]*, ≤16 chars, not
  // "hub"), in order: nodes()[i] is node_names[i]. Call once.
  virtual void create(const std::vector<std::string>& node_names) = 0;
  // Throws HarnessError for an unknown node name.
  virtual const Node& node(std::string_view name) const = 0;
  virtual const std::vector<Node>& nodes() const = 0;

  // The TCP port `service` listens on at `node`: `preferred` under netns (every node has
  // its own address), a distinct free port per (node, service) under local. Stable for
  // the life of the runtime: asking twice gives the same port.
  virtual std::uint16_t port(std::string_view node, std::string_view service,
                             std::uint16_t preferred) = 0;

  // Runs fn on a short-lived thread that has entered the node's network namespace (on
  // the calling thread under local), and waits for it; fn's exceptions propagate. Sockets
  // fn creates stay in that namespace. Thread-safe. For readiness probes.
  virtual void run_in(std::string_view node, const std::function<void()>& fn) const = 0;

  virtual bool supports_partitions() const = 0;
  // Drops every packet between nodes of different groups; nodes not named keep all
  // links. Replaces any earlier partition. Throws HarnessError under local, for an
  // unknown node, or for a node named in two groups.
  virtual void partition(const std::vector<std::vector<std::string>>& groups) = 0;
  virtual void heal() = 0;

  // Removes everything create() made (also run by the destructor). Stop the processes
  // running on the nodes first (Supervisor::stop_all). Idempotent; never throws.
  virtual void destroy() noexcept = 0;
};

// kind: "netns" or "local". run_id names every resource; state records them and must
// outlive the Runtime.
// Throws HarnessError for an unknown kind, or for netns without root.
std::unique_ptr<Runtime> make_runtime(std::string_view kind, const std::string& run_id,
                                      RunState& state);
// "netns" when running as root, "local" otherwise.
std::string default_runtime_kind();

}  // namespace fencecheck
