// The Runtime role: makes the nodes of one run, the network between them, and every
// process that runs on them.
//
// A node is a host of the test: servers n1..nN, the resource node r1, clients c1..cK.
// `netns` (root only): a hub network namespace with a bridge, one namespace per node joined
// to it by a veth pair, a private /24 derived from the run id. `docker` (root, a dockerd):
// one container per node on a per-run internal network; processes enter their container's
// namespaces and cgroups. `local`: every node is 127.0.0.1 and services get distinct ports;
// the network cannot be cut.
//
// Processes: spawn() starts a process on a node (inside its namespace under netns), in its
// own process group, with PR_SET_PDEATHSIG so that it dies with the controller, its output
// appended to its log. One spec decorator, if set, sees every spec first: that is how a
// fault library (the clock-offset preload) reaches every process of a node, and how a
// container runtime would turn a spec into a container exec.
//
// Every namespace, rule and process group is recorded in the RunState before it exists,
// so that `fencecheck clean` can remove it after a crash. The host's own network namespace
// is never changed. create() and destroy() are not thread-safe; after create() the other
// methods are. Errors throw HarnessError saying what failed and what to do.
//
// Ownership and order: the Runtime owns its processes (references stay valid until it is
// destroyed); destroy() stops them all, then removes the network. The RunState must outlive
// the Runtime.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "options/option_spec.h"
#include "platform/errors.h"
#include "platform/process.h"

namespace fencecheck {

class RunState;

struct Node {
  std::string name;     // "n1", "r1", "c3"
  std::string address;  // IPv4 address servers on this node bind to / clients dial
  std::string netns;    // network namespace name; empty under the local runtime
};

// Jepsen's grudge: each node → the nodes whose packets it drops. Cuts are one-directional
// as written; complete_grudge() makes the symmetric cut between components.
using Grudge = std::map<std::string, std::set<std::string>>;
// Every node of each component drops every node of the other components.
Grudge complete_grudge(const std::vector<std::vector<std::string>>& components);

using SpecDecorator = std::function<void(ProcessSpec&)>;

// Servers run on nodes n1..nN; every other node (the resource r1, the clients c1..cK) is
// a client node. A runtime with real hosts (ssh) picks a host of the matching role.
inline bool is_server_node(std::string_view name) { return !name.empty() && name.front() == 'n'; }

struct HostPort {
  std::string address;
  std::uint16_t port = 0;
};

// Asked every 50 ms or so by a blocking wait: true means give up now.
using CancelCheck = std::function<bool()>;

// How a readiness wait ended (Runtime::await_ready).
enum class Readiness { kReady, kTimedOut, kGaveUp };

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual std::string_view kind() const = 0;  // its runtime_registry() name

  // Makes a host directory or file visible at the same path on every node; call before
  // create(). Nodes of the local and netns runtimes see the host's files already (a no-op
  // there); docker bind-mounts it into each container, read-only unless writable.
  virtual void share(const std::filesystem::path& path, bool writable) {
    (void)path;
    (void)writable;
  }
  // A shared writable file was changed in place (a clock offset) after processes that map
  // it started: every node holding a copy gets the file's first `bytes` written into that
  // same copy, so that those processes see them. A no-op where nodes see the controller's
  // files (the default). ssh: one remote command per host holding a copy, in parallel
  // (about 55 ms; at most 10 s). Throws HarnessError when a host cannot take it.
  virtual void file_changed(const std::filesystem::path& path, std::size_t bytes) {
    (void)path;
    (void)bytes;
  }
  // How far node's monotonic clock is ahead of this machine's, in ns, for a log the node
  // stamps itself (the resource's). 0 where nodes share the controller's kernel (the
  // default); ssh: the host's boot clock (/proc/uptime, 10 ms steps) against this one's
  // monotonic clock, within one remote command (≤ 10 s), assuming the host never slept:
  // right within about 5 ms and half the command's round trip, and 0 when within that
  // (a host on this kernel).
  virtual std::int64_t monotonic_offset_ns(std::string_view node) {
    (void)node;
    return 0;
  }
  // True when some process of p's group has mapped the shared file `path` (its node's
  // copy). Reads /proc on this machine; ssh: one remote command (≤ 10 s).
  virtual bool group_maps(Process& p, const std::filesystem::path& path);
  // Creates the network and one node per name (lowercase [a-z][a-z0-9]*, ≤16 chars, not
  // "hub"), in order: nodes()[i] is node_names[i]. Call once. Blocks while it builds
  // (docker: about a second per container, in parallel; bounded by its API timeouts).
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
  // fn creates stay in that namespace. For readiness probes.
  virtual void run_in(std::string_view node, const std::function<void()>& fn) const = 0;
  // Where a probe inside run_in(node, …) connects to reach address:port as the node sees
  // it: the same address everywhere but under ssh, whose probes run on the controller and
  // get a 127.0.0.1 port forwarded through the node's ssh connection (set up once per
  // target; blocks ≤ 10 s then). Throws HarnessError when the forward cannot be made.
  virtual HostPort probe_target(std::string_view node, const std::string& address, std::uint16_t port) {
    (void)node;
    return {address, port};
  }

  // --- processes ---
  // Sets the one decorator applied to every later spawn (replacing any earlier one).
  virtual void set_spec_decorator(SpecDecorator decorator) = 0;
  // Starts the process; returns once it has exec'd. Throws HarnessError for an unknown
  // node, a program that is not installed, or any failed start-up step (naming program
  // and step).
  virtual Process& spawn(ProcessSpec spec) = 0;
  // Polls ready() every 50 ms until it returns true (kReady), the timeout passes while the
  // process still runs (kTimedOut), or give_up — or the runtime's interrupt check, see
  // set_interrupt_check() — returns true (kGaveUp; the process keeps running). Blocks at
  // most timeout plus one ready() call. Throws HarnessError quoting the log tail if the
  // process exits first: a process that cannot even start is a failure of the bench.
  virtual Readiness await_ready(Process& p, const std::function<bool()>& ready,
                                std::chrono::milliseconds timeout, const CancelCheck& give_up = {}) = 0;
  // Runs spec on its node to its end: a setup step (initdb). Waits up to timeout, giving up
  // on the interrupt check (Interrupted); throws HarnessError quoting its log tail when it
  // fails, or is still running at the timeout (it is then stopped). Its exit is expected.
  void run_to_end(ProcessSpec spec, std::chrono::milliseconds timeout);
  // await_ready() where only kReady will do: kTimedOut throws HarnessError quoting the log
  // tail, kGaveUp throws Interrupted. Blocks as long as await_ready().
  void wait_ready(Process& p, const std::function<bool()>& ready, std::chrono::milliseconds timeout);
  // Every later wait of this runtime (await_ready, wait_ready) also gives up when check
  // returns true: how the run's Ctrl-C reaches a setup that waits for a server. check is
  // called from any thread that waits, so it must be thread-safe.
  virtual void set_interrupt_check(CancelCheck check) = 0;
  // True if a TCP connection to address:port (IPv4 dotted quad) from inside `node`'s
  // network succeeds within timeout.
  virtual bool tcp_connects(std::string_view node, const std::string& address, std::uint16_t port,
                            std::chrono::milliseconds timeout) const = 0;
  // Every process spawned so far, in spawn order, stopped ones included.
  virtual std::vector<Process*> processes() const = 0;
  // Stops every process, most recently started first.
  virtual void stop_all(std::chrono::milliseconds grace = std::chrono::milliseconds(2000)) = 0;

  // --- network ---
  virtual bool supports_partitions() const = 0;
  // Replaces the cuts in force by `grudge`. Throws HarnessError under local or for an
  // unknown node.
  virtual void cut(const Grudge& grudge) = 0;
  virtual void heal() = 0;

  // --- whole-node freeze (docker pause: the cgroup freezer stops every process of the
  // node at once, without a signal any of them could see) ---
  virtual bool supports_freeze() const { return false; }
  // Throw HarnessError unless supports_freeze(); each blocks for one API call (≤ 10 s).
  virtual void freeze(std::string_view node);
  virtual void thaw(std::string_view node);

  // Stops every process, then removes everything create() made (also run by the
  // destructor). Idempotent; never throws.
  virtual void destroy() noexcept = 0;
};

// One kind of runtime, declared once in runtime_registry(): `--runtime`, its help, the
// run's validation and make_runtime() all follow from the entry. A new runtime is its own
// file with a factory, plus one entry.
struct RuntimeInfo {
  std::string name;
  std::string description;  // one line for --help
  bool cuts_network;        // can cut and heal links (the partition faults need it)
  bool freezes_nodes;       // can freeze a whole node (the freeze faults need it)
  bool shifts_clocks;       // the clock library reaches its nodes (the clock faults need it)
  bool runs_adapters;       // its nodes have the lock libraries' interpreters (--client needs it)
  bool shares_files;        // nodes see the controller's files (a backend whose setup writes
                            // into what its servers made needs it: BackendInfo::needs_shared_files)
  bool manages_servers;     // starts the backend's servers (external: the user runs them, so
                            // only a fault on the clients can run: FaultInfo::client_side)
  // Why this kind cannot run on this machine now (needs root, a missing tool, no daemon),
  // or nullopt. Quick: looks at privileges and $PATH, at most pings a local socket (≤ 2 s).
  std::function<std::optional<std::string>()> unavailable;
  std::function<std::unique_ptr<Runtime>(const std::string& run_id, RunState& state, const OptionValues& opts)>
      make;
  // The run options it reads (--docker-image): declared here, in the run's option schema.
  std::vector<OptionSpec> options = {};
};
const std::vector<RuntimeInfo>& runtime_registry();
const RuntimeInfo* find_runtime(std::string_view kind);  // nullptr when unknown
std::string runtime_names();                             // "docker, local, netns"
// The options of every runtime, each once (for the run's option schema).
std::vector<OptionSpec> runtime_option_specs();

// Makes the runtime `kind` names. run_id names every resource; state records them and must
// outlive the Runtime; opts holds the options it reads (defaults when absent). Throws
// HarnessError for an unknown kind, or one unavailable here.
// The ssh runtime over the hosts of a nodes file (platform/nodes_file.h). Throws
// InputError for a bad file.
std::unique_ptr<Runtime> make_ssh_runtime(const std::string& run_id, RunState& state,
                                          const std::filesystem::path& nodes_file);

// --endpoints of the external runtime: "BACKEND=HOST:PORT[,HOST:PORT…]", each HOST an IPv4
// address the controller reaches. Server node n<i+1> is servers[i].
struct ExternalEndpoints {
  std::string backend;
  std::vector<HostPort> servers;
};
// Throws std::invalid_argument saying what in text is malformed.
ExternalEndpoints parse_endpoints(const std::string& text);
// The names of `count` servers outside the run: n1..n<count>.
std::vector<std::string> outside_server_nodes(std::size_t count);

std::unique_ptr<Runtime> make_runtime(std::string_view kind, const std::string& run_id, RunState& state,
                                      const OptionValues& opts = {});
// "netns" when running as root, "local" otherwise.
std::string default_runtime_kind();

}  // namespace fencecheck
