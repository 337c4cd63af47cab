// The local runtime: every node is 127.0.0.1 and each (node, service) gets its own free
// port; processes run as plain children of the controller. No root, no network faults.
#include <map>
#include <mutex>
#include <set>

#include "platform/runtime_base.h"
#include "platform/tcp.h"

namespace fencecheck {

namespace {

class LocalRuntime final : public NodeTableRuntime {
 public:
  explicit LocalRuntime(RunState& state) : NodeTableRuntime(state) {}
  ~LocalRuntime() override { Runtime::destroy(); }
  std::string_view kind() const override { return "local"; }

  void create(const std::vector<std::string>& node_names) override {
    check_new_node_names(node_names);
    for (const auto& n : node_names) nodes_.push_back({n, "127.0.0.1", ""});
  }

  std::uint16_t port(std::string_view node_name, std::string_view service,
                     std::uint16_t /*preferred*/) override {
    node(node_name);  // throws for an unknown node
    std::lock_guard lock(mu_);
    std::string key = std::string(node_name) + "/" + std::string(service);
    if (auto it = ports_.find(key); it != ports_.end()) return it->second;
    // The kernel may hand out a port again once its probe socket is closed.
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::uint16_t p = free_loopback_port();
      if (given_.insert(p).second) return ports_[key] = p;
    }
    throw HarnessError("cannot find a distinct free port for " + key);
  }

  void run_in(std::string_view node_name, const std::function<void()>& fn) const override {
    node(node_name);
    fn();
  }

  NetFailures cut(const Grudge&, const Deadline&) override {
    throw HarnessError("network faults need the netns runtime (run as root)");
  }
  NetFailures heal(const Deadline&) override { return {}; }
  void destroy(const Deadline& deadline) noexcept override { stop_processes(deadline); }

 private:
  std::mutex mu_;
  std::map<std::string, std::uint16_t> ports_;
  std::set<std::uint16_t> given_;
};

}  // namespace

std::unique_ptr<Runtime> make_local_runtime(RunState& state) { return std::make_unique<LocalRuntime>(state); }

}  // namespace fencecheck
