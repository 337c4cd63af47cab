#include "harness/run/topology.h"

namespace fencecheck {

std::vector<std::string> client_nodes(int concurrency) {
  std::vector<std::string> nodes;
  for (int i = 1; i <= concurrency; ++i) nodes.push_back("c" + std::to_string(i));
  return nodes;
}

std::string start_resource_node(Runtime& runtime, const ResourceLaunch& launch) {
  const std::string node = ResourceNode::kNode;
  const Node& r = runtime.node(node);
  const std::uint16_t port = runtime.port(node, ResourceNode::kService, ResourceNode::kPreferredPort);
  const std::string address = r.address + ":" + std::to_string(port);
  Process& p = runtime.spawn({node, ResourceNode::kService,
                              {launch.exe.string(), "resource", "--listen", address, "--mode", launch.mode, "--log",
                               launch.log.string(), "--t0-ns", std::to_string(launch.t0_ns + runtime.monotonic_offset_ns(ResourceNode::kNode, Deadline::after(std::chrono::seconds(10))))},
                              {}, launch.nodes_dir / node / "resource.log", {}, {}});
  runtime.wait_ready(
      p, [&] { return runtime.tcp_connects(node, r.address, port, std::chrono::milliseconds(200)); },
      std::chrono::milliseconds(10000));
  return address;
}

}  // namespace fencecheck
