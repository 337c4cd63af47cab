// The external runtime: servers the user already runs (`--endpoints`), the resource and the
// clients in network namespaces as under netns. Each server node n<i+1> has no namespace,
// only an address on the hub's bridge where a TcpRelay of the controller listens and
// carries the nodes' connections to the real server; the run starts, stops and signals no
// server process, so only faults on the clients can run (it lacks
// Capability::kRunsServers). Made through runtime_registry.h (make_runtime("external")).
// Parsing is pure: thread-safe, never blocks.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "platform/runtime.h"

namespace fencecheck {

// --endpoints of the external runtime: "BACKEND=HOST:PORT[,HOST:PORT…]", each HOST an IPv4
// address the controller reaches. Server node n<i+1> is servers[i].
struct ExternalEndpoints {
  std::string backend;
  std::vector<HostPort> servers;
};
// Throws std::invalid_argument saying what in text is malformed.
ExternalEndpoints parse_endpoints(const std::string& text);
// The names of `count` servers outside the run: n1..n<count>.
std::vector<std::string> outside_server_nodes(std::size_t count);

}  // namespace fencecheck
