// What the local and netns runtimes share: the node table, the node-name rules and the
// processes (a Supervisor). Internal to platform/.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "platform/runtime.h"
#include "platform/supervisor.h"

namespace fencecheck {

class NodeTableRuntime : public Runtime {
 public:
  explicit NodeTableRuntime(RunState& state) : state_(state) {}

  const Node& node(std::string_view name) const override;
  const std::vector<Node>& nodes() const override { return nodes_; }

  void set_spec_decorator(SpecDecorator decorator) override;
  Process& spawn(ProcessSpec spec) override;
  Readiness await_ready(Process& p, const std::function<bool()>& ready, std::chrono::milliseconds timeout,
                        const CancelCheck& give_up) override;
  void set_interrupt_check(CancelCheck check) override;
  bool tcp_connects(std::string_view node, const std::string& address, std::uint16_t port,
                    std::chrono::milliseconds timeout) const override;
  std::vector<Process*> processes() const override;
  void stop_all(std::chrono::milliseconds grace) override;

 protected:
  // Throws HarnessError unless names are distinct, lowercase [a-z][a-z0-9]* of at most
  // 16 characters, not "hub", at most 250 of them, and create() was not called yet.
  void check_new_node_names(const std::vector<std::string>& names) const;
  // Stops every process and forgets the Supervisor; the first step of destroy().
  void stop_processes() noexcept;

  RunState& state_;
  std::vector<Node> nodes_;

 private:
  Supervisor& supervisor();
  mutable std::mutex mu_;  // decorator_, supervisor_, interrupted_
  SpecDecorator decorator_;
  CancelCheck interrupted_;
  std::unique_ptr<Supervisor> supervisor_;
};

std::unique_ptr<Runtime> make_netns_runtime(const std::string& run_id, RunState& state);

}  // namespace fencecheck
