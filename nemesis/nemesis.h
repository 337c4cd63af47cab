// The Nemesis role: faults injected into a running test. Each fault of the registry
// (fault_registry.h) names a family ("pause"); one Nemesis per family, made by the registry
// entry's factory, runs that family's faults, and the schedule (schedule.h) decides when
// each starts.
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
// Blocking: every capability method that may wait takes a Deadline its caller owns
// (platform/deadline.h) and returns by it on every runtime — under ssh, where one host may
// stop answering, as under netns. A family makes each action's deadline with
// NemesisContext::act() (a heal's with healing()) from the bounds below, so the bounds hold
// whatever the runtime; a wait for a server to be ready uses NemesisContext::wait(), which
// the final heal, Ctrl-C and the time limit end at once.
//
// Threads: the schedule runs each family on its own thread, so one family's slow action (a
// restart waiting for a quorum) never delays another's. start/replay/tick/heal of one
// Nemesis (and due) are called by one thread at a time; lock events (lock_events.h) come
// on client threads, and describe_active/active from any thread at any time: those two
// never wait for a fault action in progress.
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

#include "backends/lock_server.h"
#include "nemesis/lock_events.h"
#include "options/option_spec.h"
#include "platform/deadline.h"
#include "platform/runtime.h"
#include "platform/time_source.h"

namespace fencecheck {

// How long one fault action may take, on every runtime: the deadline a family gives it.
// (Over ssh each is one or two remote commands, which a loaded 2-core machine has taken
// over a second to answer; locally each takes milliseconds.)
inline constexpr std::chrono::milliseconds kSignalBound{5000};  // a pause (until stopped), resume, kill
inline constexpr std::chrono::milliseconds kStopBound{6000};    // a graceful stop: 2 s grace, then SIGKILL
inline constexpr std::chrono::milliseconds kNetBound{5000};     // a cut or heal of every node at once
inline constexpr std::chrono::milliseconds kClockBound{5000};   // one node's clock offset (with its first-call wait)
inline constexpr std::chrono::milliseconds kFreezeBound{5000};  // a whole node frozen or thawed
inline constexpr std::chrono::milliseconds kLaunchBound{60000}; // a process started again (an upload under ssh)
inline constexpr std::chrono::milliseconds kSessionBound{5000}; // a client's sessions ended (a statement per server)
// A heal once the user pressed Ctrl-C: short, as nothing that follows needs it (teardown
// resumes, thaws and unblocks everything anyway).
inline constexpr std::chrono::milliseconds kInterruptedHealBound{500};

// Cuts and heals links between nodes. Each changes every node's firewall at once and
// returns, by the deadline, the nodes it could not change (a silent host), each with why;
// those keep their old rules until a later cut or heal rewrites them.
class Net {
 public:
  virtual ~Net() = default;
  virtual bool available() const = 0;
  virtual NetFailures cut(const Grudge& grudge, const Deadline& deadline) = 0;  // replaces the cuts in force
  virtual NetFailures heal(const Deadline& deadline) = 0;
};

// The processes of one role's nodes: the backend's servers, or the client workers. The
// bool results say whether there was anything to act on: false when nothing runs on the
// node (it is down), and then nothing was done. Every action returns by its deadline;
// one that could not finish throws HarnessError (a pause that did not take is undone and
// reported so). Actions on different nodes may come from different threads at once (a
// kill's targets die together).
class NodeProcesses {
 public:
  virtual ~NodeProcesses() = default;
  virtual std::vector<std::string> nodes() const = 0;
  virtual bool pause(const std::string& node, const Deadline& deadline) = 0;   // SIGSTOP; returns once stopped
  virtual void resume(const std::string& node, const Deadline& deadline) = 0;  // SIGCONT
  virtual bool kill(const std::string& node, const Deadline& deadline) = 0;    // SIGKILL, an expected exit
  virtual bool stop(const std::string& node, const Deadline& deadline) = 0;    // graceful, expected
  // After kill or stop: starts the node's process again; returns once it has exec'd
  // (no-op when it runs). Throws HarnessError when it cannot be started at all.
  virtual void launch(const std::string& node, const Deadline& deadline) = 0;
  // Waits until the launched node answers, up to the role's readiness timeout (the
  // backend's for servers, 10 s for a worker) or the deadline, whichever comes first:
  // kGaveUp once the deadline's cancel check says so. Throws HarnessError when the
  // process exits first.
  virtual Readiness await_ready(const std::string& node, const Deadline& deadline) = 0;
  // Freezes the whole node, every process on it, with the cgroup freezer (docker pause):
  // a stop no process can see or handle. Only where the runtime can (the run refuses freeze
  // faults elsewhere): by default it throws HarnessError. thaw undoes it.
  virtual void freeze(const std::string& node, const Deadline& deadline) {
    (void)deadline;
    throw HarnessError("node " + node + " cannot be frozen under this runtime (use --runtime docker)");
  }
  virtual void thaw(const std::string& node, const Deadline& deadline) { freeze(node, deadline); }
  // Servers only: the node the backend says leads now; nullopt when it has no leader.
  // Blocks for one short probe per node (≤ 0.5 s each, ≤ 2 s to set one up under ssh).
  virtual std::optional<std::string> leader() const { return std::nullopt; }
  // Clients only, where the lock library can stop itself (pause-after-send): the next
  // acquire any client sends asks its library to stop its own thread for `ms` right after
  // it sent the lock commands. Replaces an armed pause not yet taken. By default it throws
  // HarnessError (the run refuses the fault where no client can).
  virtual void arm_pause_inside(std::chrono::milliseconds ms) {
    (void)ms;
    throw HarnessError("these clients cannot pause inside their lock library");
  }
  // Servers only, where the backend can (Capability::kKillsSessions, kill-session): ends
  // every session the client node `client` has open on the servers, by the servers' own
  // kill (LockServer::kill_sessions), and returns how many it ended. nullopt when a server
  // is down or paused, or another fault's action on it (a kill, a restart) outlasted the
  // deadline: then nothing was done. Holds no lock a client's ops need. By default it
  // throws HarnessError (the run refuses the fault where the backend cannot).
  virtual std::optional<int> kill_sessions(const std::string& client, const Deadline& deadline) {
    (void)deadline;
    throw HarnessError("these nodes cannot end the sessions of " + client);
  }
  // Servers only, where the backend can (Capability::kEvictsKeys, memory-pressure): fills
  // the node's server's memory until the deadline (LockServer::press_memory) and says what
  // it did. nullopt when the server is down or paused: then nothing was done. Holds no lock
  // another fault's action needs (a kill meanwhile ends the fill early, in its `error`). By
  // default it throws HarnessError (the run refuses the fault where the backend cannot).
  virtual std::optional<MemoryPressure> press_memory(const std::string& node, const Deadline& deadline) {
    (void)deadline;
    throw HarnessError("the server on " + node + " cannot be made to evict");
  }
};

// The wall clock (CLOCK_REALTIME) each node's processes see, as an offset from the host's.
// set_offset is a store into a shared page (and, under ssh, a write into each host's copy);
// for a server it first checks that the server can see it (/proc), giving a server started
// a moment ago up to 2 s (or the deadline) to read its clock.
class Clocks {
 public:
  virtual ~Clocks() = default;
  virtual bool available() const = 0;
  virtual void set_offset(const std::string& node, std::chrono::milliseconds offset, const Deadline& deadline) = 0;
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
  // The clients' lock events: the lock-aware faults subscribe here (lock_events.h).
  LockEventBus& events;
  // True once the run is ending (final heal, Ctrl-C, time limit): waits give up.
  CancelCheck ending = [] { return false; };
  // True once the user pressed Ctrl-C: an action in progress gives up at once.
  CancelCheck interrupted = [] { return false; };

  // The deadline of one fault action of at most `bound`; Ctrl-C ends it.
  Deadline act(std::chrono::milliseconds bound) const { return Deadline::after(bound, interrupted); }
  // The deadline of a heal: `bound`, or kInterruptedHealBound once Ctrl-C was pressed (a
  // heal must still be tried then, so Ctrl-C does not cancel it).
  Deadline healing(std::chrono::milliseconds bound) const {
    return Deadline::after(interrupted() ? std::min(bound, kInterruptedHealBound) : bound);
  }
  // The deadline of a wait (a server to answer) of at most `bound`; the run's end ends it.
  Deadline wait(std::chrono::milliseconds bound) const {
    return Deadline::after(bound, [e = ending, i = interrupted] { return e() || i(); });
  }
};

// The fault options in force: one options map (Jepsen's opts), option name → value, with
// a value for every option of fault_option_specs() (default_fault_options() has the
// defaults). Each option is declared once, beside the faults that read it, in
// registry.cpp; each family reads its own by name (options.ms("pause-ms")).
using FaultOptions = OptionValues;

// Every nemesis line a family records has a value with "fault" (the fault's name) and
// exactly what was done (targets, grudge, offsets, durations), so that replay() can do the
// same again and a reader can see it. A family that reacts to lock events (pause-holder)
// subscribes to NemesisContext::events when it is made, and drops the subscription when it
// goes.
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

}  // namespace fencecheck
