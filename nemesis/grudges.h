// Jepsen's partition shapes (jepsen/nemesis.clj) as grudges over a list of nodes. Every
// shape is symmetric: when a drops b, b drops a. Pure functions of their arguments and the
// rng; thread-safe.
#pragma once

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/runtime.h"

namespace fencecheck {

// Two halves after a shuffle, the smaller first: every node of one drops the other.
Grudge partition_halves(std::vector<std::string> nodes, std::mt19937_64& rng);
// One random node cut from all the others.
Grudge partition_one(const std::vector<std::string>& nodes, std::mt19937_64& rng);
// `node` cut from every one of `others` (partition-leader, partition-holder).
Grudge isolate(const std::string& node, const std::vector<std::string>& others);
// Every node sees a majority, but no two see the same one: shuffled into a ring, each node
// keeps the majority-sized window of the ring centred on itself and drops the rest.
// Symmetric: a drops b exactly when b drops a (windows of equal width on a ring). Fewer
// than 4 nodes cannot be cut that way: nothing is cut.
Grudge partition_majorities_ring(std::vector<std::string> nodes, std::mt19937_64& rng);
// Two halves joined by one bridge node that sees both and that both see.
Grudge partition_bridge(std::vector<std::string> nodes, std::mt19937_64& rng);

// {"n1": ["c1", "c2"], …}: a grudge as history values show it (nodes that drop nothing
// left out), and back. from_json throws std::invalid_argument on another shape.
nlohmann::json grudge_to_json(const Grudge& g);
Grudge grudge_from_json(const nlohmann::json& j);

}  // namespace fencecheck
