// What the local and netns runtimes share: the node table and node-name rules.
// Internal to platform/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "platform/runtime.h"

namespace fencecheck {

class NodeTableRuntime : public Runtime {
 public:
  const Node& node(std::string_view name) const override;
  const std::vector<Node>& nodes() const override { return nodes_; }

 protected:
  // Throws HarnessError unless names are distinct, lowercase [a-z][a-z0-9]* of at most
  // 16 characters, not "hub", at most 250 of them, and create() was not called yet.
  void check_new_node_names(const std::vector<std::string>& names) const;
  std::vector<Node> nodes_;
};

std::unique_ptr<Runtime> make_netns_runtime(const std::string& run_id, RunState& state);

}  // namespace fencecheck
