// The nodes of a run besides the backend's servers (LockServer::nodes()): the resource
// service's node, declared once here (its name, port and command line), and the client
// nodes c1..cN, one worker each.
//
// start_resource_node() spawns the resource service and blocks until it accepts TCP
// connections (at most 10 s, less when the runtime's interrupt check fires); it throws
// HarnessError when the service exits or does not answer, Interrupted on Ctrl-C. The
// resource node keeps the host's wall clock: clock faults never shift it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "platform/runtime.h"

namespace fencecheck {

struct ResourceNode {
  static constexpr const char* kNode = "r1";
  static constexpr const char* kService = "resource";
  static constexpr std::uint16_t kPreferredPort = 7000;
};

// "c1" … "c<concurrency>".
std::vector<std::string> client_nodes(int concurrency);

// Where the resource service runs, what it is given, and where it logs.
struct ResourceLaunch {
  std::filesystem::path exe;       // the fencecheck binary (`fencecheck resource`)
  std::string mode;                // --resource: fenced | unfenced
  std::filesystem::path log;       // resource.jsonl
  std::filesystem::path nodes_dir;  // <run>/nodes: its output goes to nodes/r1/resource.log
  std::int64_t t0_ns = 0;          // the history's t0, so both logs share a time axis (moved
                                   // by Runtime::monotonic_offset_ns to the node's own clock)
};

// Starts the resource service on ResourceNode::kNode; returns its "address:port".
std::string start_resource_node(Runtime& runtime, const ResourceLaunch& launch);

}  // namespace fencecheck
