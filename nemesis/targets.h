// Which nodes a fault hits: Jepsen's db-nodes target specs, shared by every family that
// picks servers (crash, clock).
//   "random"    a random non-empty subset (Jepsen's nil spec)
//   "one"       one node
//   "minority"  majority(n) - 1 nodes, at least one
//   "majority"  n/2 + 1 nodes
//   "all"       every node
// The nodes chosen are returned sorted. Pure; uses only the rng given.
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace fencecheck {

// `--nemesis-targets clients`: the faults that allow it (FaultInfo::targets_clients) hit a
// random non-empty subset of the client nodes instead of servers.
inline constexpr const char* kClientTargets = "clients";

// The specs above, in that order.
const std::vector<std::string>& target_specs();
bool is_target_spec(std::string_view spec);
// Throws std::invalid_argument for a spec not in target_specs().
std::vector<std::string> pick_targets(const std::vector<std::string>& nodes, std::string_view spec,
                                      std::mt19937_64& rng);

}  // namespace fencecheck
