// The capabilities a nemesis acts through (nemesis/nemesis.h), implemented over the run's
// Runtime, the backend's LockServer and the history. The client-side NodeProcesses is the
// WorkerPool itself. Each object is thread-safe as far as what it wraps is.
#pragma once

#include <string>
#include <vector>

#include "backends/lock_server.h"
#include "harness/run/history_recorder.h"
#include "nemesis/clock/node_clocks.h"
#include "nemesis/nemesis.h"
#include "platform/runtime.h"

namespace fencecheck {

class RuntimeNet final : public Net {
 public:
  explicit RuntimeNet(Runtime& runtime) : runtime_(runtime) {}
  bool available() const override { return runtime_.supports_partitions(); }
  void cut(const Grudge& grudge) override { runtime_.cut(grudge); }
  void heal() override { runtime_.heal(); }

 private:
  Runtime& runtime_;
};

class ServerProcesses final : public NodeProcesses {
 public:
  explicit ServerProcesses(LockServer& server) : server_(server) {}
  std::vector<std::string> nodes() const override { return server_.nodes(); }
  void pause(const std::string& node) override { server_.pause(node); }
  void resume(const std::string& node) override { server_.resume(node); }
  void kill(const std::string& node) override { server_.kill(node); }
  void stop(const std::string& node) override { server_.stop(node); }
  void start(const std::string& node) override { server_.start(node); }
  std::optional<std::string> leader() const override { return server_.leader(); }

 private:
  LockServer& server_;
};

// No node's clock can be shifted: the clock-offset library was not found beside the
// fencecheck binary, so a fault that needs Clocks is refused before the run starts.
class FixedClocks final : public Clocks {
 public:
  bool available() const override { return false; }
  void set_offset(const std::string& node, std::chrono::milliseconds) override;
  std::chrono::milliseconds offset(const std::string&) const override {
    return std::chrono::milliseconds(0);
  }
};

// The servers' clocks through NodeClocks, refusing to report a shift that cannot take
// effect: before a server node's offset becomes nonzero, some process of that node's
// running server must have mapped the node's clock file (NodeClocks::reaches); otherwise
// set_offset throws HarnessError naming the node, so a clock fault never passes silently
// as a no-op (it did once, for PostgreSQL running as its own user).
class ServerClocks final : public Clocks {
 public:
  ServerClocks(NodeClocks& clocks, LockServer& server) : clocks_(clocks), server_(server) {}
  bool available() const override { return true; }
  void set_offset(const std::string& node, std::chrono::milliseconds offset) override;
  std::chrono::milliseconds offset(const std::string& node) const override { return clocks_.offset(node); }

 private:
  NodeClocks& clocks_;
  LockServer& server_;
};

class HistoryFaultLog final : public FaultLog {
 public:
  explicit HistoryFaultLog(HistoryRecorder& history) : history_(history) {}
  void record(const std::string& f, const nlohmann::json& value) override {
    history_.record_nemesis(f, value);
  }

 private:
  HistoryRecorder& history_;
};

}  // namespace fencecheck
