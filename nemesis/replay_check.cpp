#include "nemesis/fault_registry.h"
#include "nemesis/replay_check.h"

#include <algorithm>
#include <map>
#include <memory>

#include "platform/errors.h"

namespace fencecheck {
namespace {

void require_node(const std::vector<std::string>& known, const std::string& node, const char* role) {
  if (std::find(known.begin(), known.end(), node) != known.end()) return;
  std::string names;
  for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("node \"" + node + "\" is not a " + role + " of this run (" + role +
                              "s: " + (names.empty() ? "none" : names) + ")");
}

class CheckedNodes final : public NodeProcesses {
 public:
  CheckedNodes(std::vector<std::string> nodes, const char* role) : nodes_(std::move(nodes)), role_(role) {}
  std::vector<std::string> nodes() const override { return nodes_; }
  bool pause(const std::string& n, const Deadline&) override { return check(n); }
  void resume(const std::string& n, const Deadline&) override { check(n); }
  bool kill(const std::string& n, const Deadline&) override { return check(n); }
  bool stop(const std::string& n, const Deadline&) override { return check(n); }
  void launch(const std::string& n, const Deadline&) override { check(n); }
  Readiness await_ready(const std::string& n, const Deadline&) override {
    check(n);
    return Readiness::kReady;
  }
  void freeze(const std::string& n, const Deadline&) override { check(n); }
  void thaw(const std::string& n, const Deadline&) override { check(n); }
  void arm_pause_inside(std::chrono::milliseconds) override {}  // whether the client can: the run's checks
  std::optional<std::string> leader() const override {
    return nodes_.empty() ? std::nullopt : std::optional(nodes_.front());
  }

 private:
  bool check(const std::string& n) const {
    require_node(nodes_, n, role_);
    return true;
  }
  std::vector<std::string> nodes_;
  const char* role_;
};

class CheckedNet final : public Net {
 public:
  explicit CheckedNet(std::vector<std::string> nodes) : nodes_(std::move(nodes)) {}
  bool available() const override { return true; }
  NetFailures cut(const Grudge& grudge, const Deadline&) override {
    for (const auto& [node, drops] : grudge) {
      require_node(nodes_, node, "node");
      for (const auto& d : drops) require_node(nodes_, d, "node");
    }
    return {};
  }
  NetFailures heal(const Deadline&) override { return {}; }

 private:
  std::vector<std::string> nodes_;
};

class CheckedClocks final : public Clocks {
 public:
  explicit CheckedClocks(std::vector<std::string> nodes) : nodes_(std::move(nodes)) {}
  bool available() const override { return true; }
  void set_offset(const std::string& node, std::chrono::milliseconds, const Deadline&) override {
    require_node(nodes_, node, "node");
  }
  std::chrono::milliseconds offset(const std::string&) const override { return std::chrono::milliseconds(0); }

 private:
  std::vector<std::string> nodes_;
};

class NoLog final : public FaultLog {
 public:
  void record(const std::string&, const nlohmann::json&, std::optional<TimeSource::Instant>) override {}
};

}  // namespace

void check_replay(const std::vector<std::string>& faults, const std::vector<ReplayLine>& lines,
                  const std::vector<std::string>& servers, const std::vector<std::string>& clients,
                  const FaultOptions& options, const std::string& file) {
  std::vector<std::string> all = servers;
  all.insert(all.end(), clients.begin(), clients.end());
  CheckedNodes server_nodes(servers, "server"), client_nodes(clients, "client");
  CheckedNet net(all);
  CheckedClocks clocks(all);  // clock faults shift servers, or clients (--nemesis-targets clients)
  NoLog log;
  ManualTime time;
  LockEventBus events;  // nothing publishes: the lines are checked, not run
  NemesisContext ctx{net, server_nodes, client_nodes, clocks, log, time, events};
  std::map<std::string, std::unique_ptr<Nemesis>> families;
  for (const auto& name : faults) {
    const FaultInfo* info = find_fault(name);
    if (info != nullptr && !families.contains(info->family)) families[info->family] = info->make(ctx, options);
  }
  for (const ReplayLine& line : lines) {
    try {
      const nlohmann::json& fault = line.value.at("fault");
      if (!fault.is_string()) throw std::invalid_argument("\"fault\" must be a string");
      const FaultInfo* info = find_fault(fault.get<std::string>());
      if (info == nullptr) throw std::invalid_argument("unknown fault \"" + fault.get<std::string>() + "\"");
      auto it = families.find(info->family);
      if (it == families.end()) {
        throw std::invalid_argument("fault \"" + info->name + "\" is not among this run's faults");
      }
      it->second->replay(line.f, line.value);
    } catch (const std::exception& e) {
      throw InputError(file, line.line, "value", "nemesis line \"" + line.f + "\" cannot be replayed: " + e.what());
    }
  }
}

}  // namespace fencecheck
