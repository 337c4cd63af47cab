// FakeNemesisEnv: every capability of a NemesisContext, recording instead of acting, on a
// ManualTime so that tests move time by hand and never sleep. Process actions are kept in
// one ordered list as signals (pause = SIGSTOP, resume = SIGCONT, kill = SIGKILL, stop =
// SIGTERM, launch = 0) so tests can assert what a nemesis did, in order; a killed or
// stopped node is down (pause/kill/stop do nothing and return false) until launched. The
// servers end a client's sessions (kill_sessions) as open_sessions() says, and fill their
// memory (press_memory) at once, saying they stored 100 items and evicted 7; the clients
// can do neither, as the real ones. Thread-safe, because the schedule
// may call it from its own thread while the test reads it.
#pragma once

#include <csignal>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nemesis/fault_registry.h"
#include "platform/errors.h"
#include "platform/time_source.h"

namespace fencecheck::testing {

struct Signal {
  std::string node;
  int sig;
};

struct Recorded {
  std::string f;
  nlohmann::json value;
  TimeSource::Instant at;  // the ManualTime when it was recorded
  std::optional<TimeSource::Instant> planned;
};

class FakeNemesisEnv {
 public:
  // Not signals: a whole node frozen and thawed (NodeProcesses::freeze), in the same list.
  static constexpr int kFrozen = -SIGSTOP;
  static constexpr int kThawed = -SIGCONT;

 public:
  FakeNemesisEnv(std::vector<std::string> clients, std::vector<std::string> servers)
      : clients_(*this, std::move(clients), false), servers_(*this, std::move(servers), true) {}

  std::vector<Signal> signals() const {
    std::lock_guard lock(mu_);
    return signals_;
  }
  std::vector<Recorded> records() const {
    std::lock_guard lock(mu_);
    return records_;
  }
  // await_ready of node times out from now on (a server whose quorum is withheld).
  void never_ready(const std::string& node) {
    std::lock_guard lock(mu_);
    never_ready_.insert(node);
  }
  std::vector<Grudge> cuts() const {
    std::lock_guard lock(mu_);
    return cuts_;
  }
  // Cuts and heals leave node unchanged from now on, and say so (a silent ssh host).
  void silent(const std::string& node) {
    std::lock_guard lock(mu_);
    silent_.insert(node);
  }
  // Called inside every pause, before it takes effect (a test's seam for races).
  void on_pause(std::function<void(const std::string& node)> hook) {
    std::lock_guard lock(mu_);
    on_pause_ = std::move(hook);
  }
  // stop() of node throws from now on (a host that fails mid-restart).
  void failing_stop(const std::string& node) {
    std::lock_guard lock(mu_);
    failing_stop_.insert(node);
  }
  // The client node has n sessions open on the servers, which the next kill_sessions ends.
  void open_sessions(const std::string& client, int n) {
    std::lock_guard lock(mu_);
    sessions_[client] = n;
  }
  // The servers' kill_sessions throws from now on (a server that refuses or does not answer).
  void failing_kill_sessions() {
    std::lock_guard lock(mu_);
    failing_kill_sessions_ = true;
  }
  // The clients whose sessions kill_sessions was asked to end, in order.
  std::vector<std::string> sessions_killed() const {
    std::lock_guard lock(mu_);
    return sessions_killed_;
  }
  // The server nodes press_memory was asked to fill, in order.
  std::vector<std::string> pressed() const {
    std::lock_guard lock(mu_);
    return pressed_;
  }
  // What arm_pause_inside() last armed on the clients (0: nothing).
  std::chrono::milliseconds armed_inside() const {
    std::lock_guard lock(mu_);
    return armed_inside_;
  }
  // Lock events as a client session publishes them, at the ManualTime's now.
  void publish(LockEventKind kind, const std::string& client, const std::string& key = "l0",
               const std::function<void(LockEvent&)>& fill = {}) {
    LockEvent e{kind, client, key, time.now()};
    if (fill) fill(e);
    events.publish(e);
  }
  void acquired(const std::string& client) { publish(LockEventKind::kAcquireOk, client); }
  // Targets of the pauses so far, in order.
  std::vector<std::string> stopped_nodes() const {
    std::vector<std::string> out;
    for (const auto& s : signals()) {
      if (s.sig == SIGSTOP) out.push_back(s.node);
    }
    return out;
  }
  // Per node: pauses (and freezes) minus resumes (and thaws); also false when a resume ever
  // came before its pause.
  bool every_stop_resumed_in_order() const {
    std::map<std::string, int> depth;
    for (const auto& s : signals()) {
      depth[s.node] += s.sig == SIGSTOP || s.sig == kFrozen ? 1 : s.sig == SIGCONT || s.sig == kThawed ? -1 : 0;
      if (depth[s.node] < 0 || depth[s.node] > 1) return false;
    }
    for (const auto& [node, d] : depth) {
      if (d != 0) return false;
    }
    return true;
  }

 private:
  void add_signal(const std::string& node, int sig) {
    std::lock_guard lock(mu_);
    signals_.push_back({node, sig});
  }

  class Processes final : public NodeProcesses {
   public:
    Processes(FakeNemesisEnv& env, std::vector<std::string> nodes, bool servers)
        : env_(env), nodes_(std::move(nodes)), servers_(servers) {}
    std::vector<std::string> nodes() const override { return nodes_; }
    // A node is down between a kill or stop and its launch; actions on it then do nothing.
    bool pause(const std::string& node, const Deadline&) override {
      std::function<void(const std::string&)> hook;
      {
        std::lock_guard lock(env_.mu_);
        hook = env_.on_pause_;
      }
      if (hook) hook(node);
      return act(node, SIGSTOP);
    }
    void resume(const std::string& node, const Deadline&) override { act(node, SIGCONT); }
    // A frozen node is frozen whether or not its process runs: never "down".
    void freeze(const std::string& node, const Deadline&) override { env_.add_signal(node, kFrozen); }
    void thaw(const std::string& node, const Deadline&) override { env_.add_signal(node, kThawed); }
    void arm_pause_inside(std::chrono::milliseconds ms) override {
      std::lock_guard lock(env_.mu_);
      env_.armed_inside_ = ms;
    }
    // Servers only: nullopt while one of them is down.
    std::optional<int> kill_sessions(const std::string& client, const Deadline& d) override {
      if (!servers_) return NodeProcesses::kill_sessions(client, d);  // throws, as the real clients'
      std::lock_guard lock(env_.mu_);
      env_.sessions_killed_.push_back(client);
      if (env_.failing_kill_sessions_) throw HarnessError("the server did not answer (a test's failure)");
      for (const auto& node : nodes_) {
        if (env_.down_.contains(node)) return std::nullopt;
      }
      return std::exchange(env_.sessions_[client], 0);
    }
    // Servers only: nullopt while the node is down.
    std::optional<MemoryPressure> press_memory(const std::string& node, const Deadline& d) override {
      if (!servers_) return NodeProcesses::press_memory(node, d);  // throws, as the real clients'
      std::lock_guard lock(env_.mu_);
      env_.pressed_.push_back(node);
      if (env_.down_.contains(node)) return std::nullopt;
      return MemoryPressure{.stored = 100, .refused = 0, .evictions = 7, .error = ""};
    }
    bool kill(const std::string& node, const Deadline&) override {
      if (!act(node, SIGKILL)) return false;
      std::lock_guard lock(env_.mu_);
      env_.down_.insert(node);
      return true;
    }
    bool stop(const std::string& node, const Deadline&) override {
      {
        std::lock_guard lock(env_.mu_);
        if (env_.failing_stop_.contains(node)) throw HarnessError("node " + node + " did not stop (a test's failure)");
      }
      if (!act(node, SIGTERM)) return false;
      std::lock_guard lock(env_.mu_);
      env_.down_.insert(node);
      return true;
    }
    void launch(const std::string& node, const Deadline&) override {
      {
        std::lock_guard lock(env_.mu_);
        env_.down_.erase(node);
      }
      env_.add_signal(node, 0);
    }
    Readiness await_ready(const std::string& node, const Deadline& deadline) override {
      std::lock_guard lock(env_.mu_);
      if (env_.never_ready_.contains(node)) return deadline.cancelled() ? Readiness::kGaveUp : Readiness::kTimedOut;
      return Readiness::kReady;
    }
    std::optional<std::string> leader() const override {
      return nodes_.empty() ? std::nullopt : std::optional(nodes_.front());
    }

   private:
    bool act(const std::string& node, int sig) {
      {
        std::lock_guard lock(env_.mu_);
        if (env_.down_.contains(node)) return false;
      }
      env_.add_signal(node, sig);
      return true;
    }
    FakeNemesisEnv& env_;
    std::vector<std::string> nodes_;
    bool servers_;
  };
  class FakeNet final : public Net {
   public:
    explicit FakeNet(FakeNemesisEnv& env) : env_(env) {}
    bool available() const override { return true; }
    NetFailures cut(const Grudge& g, const Deadline&) override {
      std::lock_guard lock(env_.mu_);
      env_.cuts_.push_back(g);
      NetFailures failures;
      for (const auto& node : env_.silent_) failures[node] = "no answer within 3000 ms";
      return failures;
    }
    NetFailures heal(const Deadline& d) override { return cut({}, d); }

   private:
    FakeNemesisEnv& env_;
  };
  class FakeClocks final : public Clocks {
   public:
    bool available() const override { return true; }
    void set_offset(const std::string& node, std::chrono::milliseconds d, const Deadline&) override { offsets_[node] = d; }
    std::chrono::milliseconds offset(const std::string& node) const override {
      auto it = offsets_.find(node);
      return it == offsets_.end() ? std::chrono::milliseconds(0) : it->second;
    }

   private:
    std::map<std::string, std::chrono::milliseconds> offsets_;
  };
  class Log final : public FaultLog {
   public:
    explicit Log(FakeNemesisEnv& env) : env_(env) {}
    void record(const std::string& f, const nlohmann::json& value,
                std::optional<TimeSource::Instant> planned) override {
      std::lock_guard lock(env_.mu_);
      env_.records_.push_back({f, value, env_.time.now(), planned});
    }

   private:
    FakeNemesisEnv& env_;
  };

  mutable std::mutex mu_;
  std::set<std::string> down_;         // killed or stopped, not launched again
  std::set<std::string> never_ready_;  // await_ready times out for these
  std::vector<Signal> signals_;
  std::vector<Recorded> records_;
  std::vector<Grudge> cuts_;
  std::set<std::string> silent_;
  std::set<std::string> failing_stop_;
  std::function<void(const std::string&)> on_pause_;
  std::chrono::milliseconds armed_inside_{0};
  std::map<std::string, int> sessions_;  // client → sessions open on the servers
  std::vector<std::string> sessions_killed_;
  bool failing_kill_sessions_ = false;
  std::vector<std::string> pressed_;
  Processes clients_, servers_;
  FakeNet net_{*this};
  FakeClocks clocks_;
  Log log_{*this};

 public:
  // Declared last: it refers to the capabilities above.
  ManualTime time;
  LockEventBus events;
  NemesisContext ctx{net_, servers_, clients_, clocks_, log_, time, events};
};

// The default fault options with the given ones changed.
inline FaultOptions fault_options(const std::map<std::string, nlohmann::json>& changed) {
  FaultOptions o = default_fault_options();
  for (const auto& [name, value] : changed) o.set(name, value);
  return o;
}

// FaultOptions with the pause (and partition-holder cut) set, the rest default.
inline FaultOptions with_pause(std::chrono::milliseconds pause) { return fault_options({{"pause-ms", pause.count()}}); }

}  // namespace fencecheck::testing
