// The Runtime role: makes the nodes of one run, the network between them, and every
// process that runs on them.
//
// A node is a host of the test: servers n1..nN, the resource node r1, clients c1..cK.
// `netns` (root only): a hub network namespace with a bridge, one namespace per node joined
// to it by a veth pair, a private /24 derived from the run id. `docker` (root, a dockerd):
// one container per node on a per-run internal network; processes enter their container's
// namespaces and cgroups. `ssh`: every node is a real host of a nodes file, driven over
// OpenSSH; processes run there, signals and firewall rules are remote commands.
// `external`: netns for the resource and the clients, the servers the user's own, reached
// through a relay. `local`: every node is 127.0.0.1 and services get distinct ports; the
// network cannot be cut. runtime_registry.h lists every kind, what each offers and how to
// make one.
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
// Blocking: a method that may wait on a node (a remote host, a container's API) takes the
// caller's Deadline (platform/deadline.h) and returns by then on every runtime: the bounds
// nemesis/nemesis.h promises hold under ssh as under netns. A method without one is either
// local and quick, or bounded as its comment says.
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

#include "platform/deadline.h"
#include "platform/errors.h"
#include "platform/process.h"

namespace fencecheck {

class RunState;

struct Node {
  std::string name;     // "n1", "r1", "c3"
  std::string address;  // IPv4 address servers on this node bind to / clients dial
  std::string netns;    // network namespace name; empty under the local runtime
};

// What a cut or heal could not do: node → why.
using NetFailures = std::map<std::string, std::string>;

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
  // (about 55 ms), by the deadline. Throws HarnessError when a host cannot take it.
  virtual void file_changed(const std::filesystem::path& path, std::size_t bytes, const Deadline& deadline) {
    (void)path;
    (void)bytes;
    (void)deadline;
  }
  // How far node's monotonic clock is ahead of this machine's, in ns, for a log the node
  // stamps itself (the resource's). 0 where nodes share the controller's kernel (the
  // default); ssh: the host's boot clock (/proc/uptime, 10 ms steps) against this one's
  // monotonic clock, within one remote command (≤ 10 s), assuming the host never slept:
  // right within about 5 ms and half the command's round trip, and 0 when within that
  // (a host on this kernel). ssh: one remote command by the deadline.
  virtual std::int64_t monotonic_offset_ns(std::string_view node, const Deadline& deadline) {
    (void)node;
    (void)deadline;
    return 0;
  }
  // True when some process of p's group has mapped the shared file `path` (its node's
  // copy). Reads /proc on this machine; ssh: one remote command by the deadline.
  virtual bool group_maps(Process& p, const std::filesystem::path& path, const Deadline& deadline);
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
  // target; blocks ≤ 2 s then, so that a readiness probe stays short). Throws HarnessError
  // when the forward cannot be made.
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
  // Polls ready() every 50 ms until it returns true (kReady), the deadline passes while the
  // process still runs (kTimedOut), or the deadline's cancel check — or the runtime's
  // interrupt check, see set_interrupt_check() — says give up (kGaveUp; the process keeps
  // running). Blocks at most until the deadline plus one ready() call (a probe: bounded,
  // ≤ 2 s on every runtime). Throws HarnessError quoting the log tail if the process exits
  // first: a process that cannot even start is a failure of the bench.
  virtual Readiness await_ready(Process& p, const std::function<bool()>& ready, const Deadline& deadline) = 0;
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

  // --- scratch directories ---
  // A directory on the controller's files that a server makes for this run alone (a data
  // directory) and that must not outlive it: recorded in the RunState before it is made, so
  // that `fencecheck clean` removes it after a crash; forget_scratch() once its owner removed
  // it. Quick (one state-file rewrite); HarnessError when it cannot be recorded.
  virtual void record_scratch(const std::filesystem::path& dir) { (void)dir; }
  virtual void forget_scratch(const std::filesystem::path& dir) { (void)dir; }
  // The same for a mount point on the controller's machine that a server's data lives on
  // (a FUSE file system: fclazydisk): recorded before it is mounted, so that `fencecheck
  // clean` detaches it after a crash; forgotten once its owner unmounted it.
  virtual void record_mount(const std::filesystem::path& dir) { (void)dir; }
  virtual void forget_mount(const std::filesystem::path& dir) { (void)dir; }

  // --- network --- (whether a kind cuts links at all: runtime_offers(r, kCutsNetwork),
  // from its registry entry, platform/runtime_registry.h)
  // Replaces the cuts in force by `grudge`, every node's rules at once, by the deadline.
  // Returns the nodes whose rules could not be set (their host did not answer in time),
  // each with why; their old rules may still be in force, and the next cut or heal
  // rewrites them. Empty: done everywhere. Throws HarnessError under local or for an
  // unknown node.
  virtual NetFailures cut(const Grudge& grudge, const Deadline& deadline) = 0;
  virtual NetFailures heal(const Deadline& deadline) = 0;

  // --- whole-node freeze (docker pause: the cgroup freezer stops every process of the
  // node at once, without a signal any of them could see) ---
  virtual bool supports_freeze() const { return false; }
  // Throw HarnessError unless supports_freeze(); each is one API call, by the deadline.
  virtual void freeze(std::string_view node, const Deadline& deadline);
  virtual void thaw(std::string_view node, const Deadline& deadline);

  // Stops every process, then removes everything create() made, giving up on what is not
  // done by the deadline (a silent host: `fencecheck clean` finishes, and a warning says
  // so). Idempotent; never throws. The destructor runs it with 30 s.
  virtual void destroy(const Deadline& deadline) noexcept = 0;
  void destroy() noexcept { destroy(Deadline::after(std::chrono::seconds(30))); }
};

}  // namespace fencecheck
