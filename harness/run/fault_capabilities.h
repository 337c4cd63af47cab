// The capabilities a nemesis acts through (nemesis/nemesis.h), implemented over the run's
// Runtime, the backend's LockServer and the history. The client-side NodeProcesses is the
// WorkerPool itself. Each object is thread-safe as far as what it wraps is.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/lock_server.h"
#include "harness/run/history_recorder.h"
#include "nemesis/clock/node_clocks.h"
#include "nemesis/nemesis.h"
#include "platform/node_locks.h"
#include "platform/runtime.h"
#include "platform/runtime_registry.h"

namespace fencecheck {

class RuntimeNet final : public Net {
 public:
  explicit RuntimeNet(Runtime& runtime) : runtime_(runtime) {}
  bool available() const override { return runtime_offers(runtime_, Capability::kCutsNetwork); }
  NetFailures cut(const Grudge& grudge, const Deadline& deadline) override { return runtime_.cut(grudge, deadline); }
  NetFailures heal(const Deadline& deadline) override { return runtime_.heal(deadline); }

 private:
  Runtime& runtime_;
};

// The servers' processes. Actions on one node (pause, kill, stop, launch) are serialized
// by that node's lock, so that a pause family and a crash family acting on the same node
// at once never pause a node that is being killed and report it paused; actions on
// different nodes run at once (a majority killed together). A lock is held only for those
// actions (each by its deadline), never while waiting for a server to be ready.
// kill_sessions holds every server's lock (waiting for them no longer than its deadline),
// so that no pause, kill or stop of a server begins while it asks the servers; it runs on
// the client's thread whose grant fired it and takes no lock the other clients' ops need.
class ServerProcesses final : public NodeProcesses {
 public:
  ServerProcesses(LockServer& server, Runtime& runtime) : server_(server), runtime_(runtime) {}
  std::vector<std::string> nodes() const override { return server_.nodes(); }
  bool pause(const std::string& node, const Deadline& deadline) override;
  void resume(const std::string& node, const Deadline& deadline) override;
  bool kill(const std::string& node, const Deadline& deadline) override;
  bool stop(const std::string& node, const Deadline& deadline) override;
  void launch(const std::string& node, const Deadline& deadline) override;
  Readiness await_ready(const std::string& node, const Deadline& deadline) override {
    return server_.await_ready(node, deadline);
  }
  std::optional<std::string> leader() const override { return server_.leader(); }
  std::optional<int> kill_sessions(const std::string& client, const Deadline& deadline) override;
  std::optional<MemoryPressure> press_memory(const std::string& node, const Deadline& deadline) override;
  void freeze(const std::string& node, const Deadline& deadline) override { runtime_.freeze(node, deadline); }
  void thaw(const std::string& node, const Deadline& deadline) override { runtime_.thaw(node, deadline); }

 private:
  LockServer& server_;
  Runtime& runtime_;
  NodeLocks acting_;  // one per node
};

// No node's clock can be shifted: the clock-offset library was not found beside the
// fencecheck binary, so a fault that needs Clocks is refused before the run starts.
class FixedClocks final : public Clocks {
 public:
  bool available() const override { return false; }
  void set_offset(const std::string& node, std::chrono::milliseconds, const Deadline&) override;
  std::chrono::milliseconds offset(const std::string&) const override {
    return std::chrono::milliseconds(0);
  }
};

// The servers' clocks through NodeClocks, refusing to report a shift that cannot take
// effect: before a server node's offset becomes nonzero, some process of that node's
// running server must have mapped the node's clock file (NodeClocks::reaches); otherwise
// set_offset throws HarnessError naming the node, so a clock fault never passes silently
// as a no-op (it did once, for PostgreSQL running as its own user). A server started a
// moment ago gets up to 2 s (or the deadline) to make its first clock call.
class ServerClocks final : public Clocks {
 public:
  ServerClocks(NodeClocks& clocks, LockServer& server, Runtime& runtime)
      : clocks_(clocks), server_(server), runtime_(runtime) {}
  bool available() const override { return true; }
  void set_offset(const std::string& node, std::chrono::milliseconds offset, const Deadline& deadline) override;
  std::chrono::milliseconds offset(const std::string& node) const override { return clocks_.offset(node); }

 private:
  bool reached(const std::string& node, const Deadline& deadline);

  NodeClocks& clocks_;
  LockServer& server_;
  Runtime& runtime_;
  std::mutex mu_;
  std::set<const Process*> seen_;  // server processes known to have mapped their node's clock file
};

// Nemesis lines into the history. A planned instant becomes the value's "planned_ns", on
// the history's own time axis (ns since t0), so a reader sees how late a fault came.
class HistoryFaultLog final : public FaultLog {
 public:
  HistoryFaultLog(HistoryRecorder& history, std::int64_t t0_ns) : history_(history), t0_ns_(t0_ns) {}
  void record(const std::string& f, const nlohmann::json& value,
              std::optional<TimeSource::Instant> planned) override;

 private:
  HistoryRecorder& history_;
  std::int64_t t0_ns_;
};

}  // namespace fencecheck
