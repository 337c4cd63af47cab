// The Nemesis role: faults injected into a running test. Each fault of the registry names
// a family ("pause"); one Nemesis per family, made by the registry entry's factory, runs
// that family's faults, and the schedule (schedule.h) decides when each starts.
//
// A nemesis touches the test only through the capabilities in NemesisContext, which the
// runner implements: the network (Net), the processes of the server and client nodes
// (NodeProcesses), the nodes' wall clocks (Clocks), the nemesis lines of the history
// (FaultLog) and the time (TimeSource, a ManualTime in unit tests). Every start and end of
// a fault is recorded in the FaultLog with its exact targets; an action whose target is not
// there (a pause of a server that is down) is recorded with "not_applied" saying why, never
// as done. Capabilities throw HarnessError when they cannot act; the schedule then stops
// and the run reports it.
//
// Blocking: every capability method below says how long it may block. None of them may
// wait for the system under test without a bound, and a wait for a server to be ready
// polls a CancelCheck so that the final heal, Ctrl-C and the time limit end it at once.
//
// Threads: the schedule runs each family on its own thread, so one family's slow action (a
// restart waiting for a quorum) never delays another's. start/replay/tick/heal of one
// Nemesis (and due) are called by one thread at a time; on_acquired comes from client
// threads, and describe_active/active from any thread at any time: those two never wait
// for a fault action in progress.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "options/option_spec.h"
#include "platform/runtime.h"
#include "platform/time_source.h"

namespace fencecheck {

// Cuts and heals links between nodes (the netns runtime only). cut and heal change every
// node's firewall: bounded, about 20 ms per node under netns.
class Net {
 public:
  virtual ~Net() = default;
  virtual bool available() const = 0;
  virtual void cut(const Grudge& grudge) = 0;  // replaces the cuts in force
  virtual void heal() = 0;
};

// The processes of one role's nodes: the backend's servers, or the client workers. The
// bool results say whether there was anything to act on: false when nothing runs on the
// node (it is down), and then nothing was done. Actions on different nodes may come from
// different threads at once (a kill's targets die together).
class NodeProcesses {
 public:
  virtual ~NodeProcesses() = default;
  virtual std::vector<std::string> nodes() const = 0;
  virtual bool pause(const std::string& node) = 0;   // SIGSTOP; returns once stopped (≤ 2 s)
  virtual void resume(const std::string& node) = 0;  // SIGCONT; never blocks
  virtual bool kill(const std::string& node) = 0;    // SIGKILL, an expected exit (≤ 1 s)
  virtual bool stop(const std::string& node) = 0;    // graceful, expected (≤ 2 s grace)
  // After kill or stop: starts the node's process again; returns once it has exec'd
  // (no-op when it runs). Throws HarnessError when it cannot be started at all.
  virtual void launch(const std::string& node) = 0;
  // Waits until the launched node answers, up to the role's readiness timeout (the
  // backend's for servers, 10 s for a worker), giving up as soon as give_up returns true.
  // Throws HarnessError when the process exits first.
  virtual Readiness await_ready(const std::string& node, const CancelCheck& give_up) = 0;
  // Freezes the whole node, every process on it, with the cgroup freezer (docker pause):
  // a stop no process can see or handle. Only where the runtime can (RuntimeInfo::
  // freezes_nodes; the run refuses freeze faults elsewhere): by default it throws
  // HarnessError. thaw undoes it. Each blocks for one runtime call (≤ 10 s).
  virtual void freeze(const std::string& node) {
    throw HarnessError("node " + node + " cannot be frozen under this runtime (use --runtime docker)");
  }
  virtual void thaw(const std::string& node) { freeze(node); }
  // Servers only: the node the backend says leads now; nullopt when it has no leader.
  // Blocks for one short probe per node (≤ 0.5 s each).
  virtual std::optional<std::string> leader() const { return std::nullopt; }
};

// The wall clock (CLOCK_REALTIME) each node's processes see, as an offset from the host's.
// set_offset is a store into a shared page; for a server it first checks that the server
// can see it (/proc), giving a server started a moment ago up to 2 s to read its clock.
class Clocks {
 public:
  virtual ~Clocks() = default;
  virtual bool available() const = 0;
  virtual void set_offset(const std::string& node, std::chrono::milliseconds offset) = 0;
  virtual std::chrono::milliseconds offset(const std::string& node) const = 0;
};

// The nemesis lines of the history: type info, process "nemesis". Appends a line; never
// waits for anything but the history file.
class FaultLog {
 public:
  virtual ~FaultLog() = default;
  // planned: the instant the schedule meant this to happen, when it had one (the history
  // then shows how late it came); nullopt for actions a lock event triggered.
  virtual void record(const std::string& f, const nlohmann::json& value,
                      std::optional<TimeSource::Instant> planned) = 0;
  void record(const std::string& f, const nlohmann::json& value) { record(f, value, std::nullopt); }
};

struct NemesisContext {
  Net& net;
  NodeProcesses& servers;
  NodeProcesses& clients;
  Clocks& clocks;
  FaultLog& log;
  const TimeSource& time;
  // True once the run is ending (final heal, Ctrl-C, time limit): waits give up.
  CancelCheck ending = [] { return false; };
};

// The fault options in force: one options map (Jepsen's opts), option name → value, with
// a value for every option of fault_option_specs() (default_fault_options() has the
// defaults). Each option is declared once, beside the faults that read it, in
// registry.cpp; each family reads its own by name (options.ms("pause-ms")).
using FaultOptions = OptionValues;

// Every nemesis line a family records has a value with "fault" (the fault's name) and
// exactly what was done (targets, grudge, offsets, durations), so that replay() can do the
// same again and a reader can see it.
class Nemesis {
 public:
  virtual ~Nemesis() = default;
  // Begins `fault`, one of this family's names, choosing targets and parameters with rng
  // (the schedule's). A lock-aware fault (…-holder) only arms here.
  virtual void start(const std::string& fault, std::mt19937_64& rng) = 0;
  // Re-applies a recorded nemesis line of this family (its f and value) with the same
  // targets and parameters, and records it again. Throws std::invalid_argument for a line
  // it cannot replay.
  virtual void replay(const std::string& f, const nlohmann::json& value) = 0;
  // A client's acquire just completed ok; called before that client's next op.
  virtual void on_acquired(const std::string& client_node) { (void)client_node; }
  // A client's acquire was just sent to its worker / just came back, whatever its outcome
  // (called on the client's thread; must not wait for a fault action).
  virtual void on_acquire_sent(const std::string& client_node) { (void)client_node; }
  virtual void on_acquire_ended(const std::string& client_node) { (void)client_node; }
  // Called just before a client's acquire is sent: how long its lock library should stop
  // itself right after sending the lock commands (pause-after-send); 0 for no pause.
  virtual std::chrono::milliseconds pause_in_acquire(const std::string& client_node) {
    (void)client_node;
    return std::chrono::milliseconds(0);
  }
  // Ends faults whose time is up (reads the context's TimeSource).
  virtual void tick() = 0;
  // When tick() will next have something to do (a self-timed fault's end); nullopt when
  // nothing is due. The schedule records it as the planned instant of what tick() does.
  virtual std::optional<TimeSource::Instant> due() const { return std::nullopt; }
  // True while a fault is armed or in force.
  virtual bool active() const = 0;
  // True while a fault is in force: it has acted (a fault merely armed, waiting for its
  // moment, has not). Bench health does not count this time as a stall.
  virtual bool acting() const { return active(); }
  // Human descriptions of what is in force now, e.g. "pause-holder c3".
  virtual std::vector<std::string> describe_active() const = 0;
  // Ends every fault now. Idempotent.
  virtual void heal() = 0;
};

struct FaultInfo {
  std::string name;    // "pause-holder"
  std::string family;  // "pause": the faults one Nemesis serves together
  std::string description;
  bool needs_net = false;     // needs a runtime that cuts links (RuntimeInfo::cuts_network)
  bool needs_clocks = false;  // needs Clocks::available()
  bool needs_leader = false;  // the backend must say which server leads
  // Ends by itself (a pause of --pause-ms, a restart after --restart-ms, a strobe): the
  // schedule never heals it early. Otherwise (a partition, a clock bump) the schedule
  // heals it after a random hold.
  bool self_timed = false;
  std::function<std::unique_ptr<Nemesis>(NemesisContext&, const FaultOptions&)> make;
  // The options it reads, by name: each declared once in fault_option_specs().
  std::vector<std::string> options = {};
  bool needs_freeze = false;  // needs a runtime that freezes nodes (RuntimeInfo::freezes_nodes)
  // `--nemesis-targets clients` makes it hit clients instead of servers (clock faults: a
  // lock library computes validity from its own wall clock).
  bool targets_clients = false;
  // Works inside the client's lock library: needs an adapter that can pause itself
  // (AdapterInfo::pauses_after_send).
  bool pauses_inside_client = false;
  // Acts on clients and their own links only, never on a server: it runs against servers
  // the run does not manage (RuntimeInfo::manages_servers). A clock fault with
  // targets_clients is client-side when --nemesis-targets clients aims it there.
  bool client_side = false;
  // Acts only as a fault plan's step says (nemesis/plan.h): never drawn, not for --nemesis.
  bool planned_only = false;
};

const std::vector<FaultInfo>& fault_registry();
const FaultInfo* find_fault(std::string_view name);  // nullptr when unknown
std::string fault_names();
// Every fault option (--pause-ms, --restart-ms, --clock-max-ms, --clock-min-ms,
// --nemesis-targets, …), each declared once, with the faults that read it named in its help.
const std::vector<OptionSpec>& fault_option_specs();
// Each of fault_option_specs() at its default: what a test's nemesis gets unless it says.
FaultOptions default_fault_options();
// The families of a list of faults, each once, in registry order.
std::vector<std::string> families_of(const std::vector<std::string>& faults);

}  // namespace fencecheck
