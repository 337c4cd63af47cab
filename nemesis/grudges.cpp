#include "nemesis/grudges.h"

#include <algorithm>
#include <stdexcept>

namespace fencecheck {

Grudge partition_halves(std::vector<std::string> nodes, std::mt19937_64& rng) {
  std::shuffle(nodes.begin(), nodes.end(), rng);
  auto middle = nodes.begin() + static_cast<std::ptrdiff_t>(nodes.size() / 2);
  return complete_grudge({{nodes.begin(), middle}, {middle, nodes.end()}});
}

Grudge partition_one(const std::vector<std::string>& nodes, std::mt19937_64& rng) {
  if (nodes.empty()) return {};
  return isolate(nodes[rng() % nodes.size()], nodes);
}

Grudge isolate(const std::string& node, const std::vector<std::string>& others) {
  std::vector<std::string> rest;
  for (const auto& n : others) {
    if (n != node) rest.push_back(n);
  }
  return complete_grudge({{node}, rest});
}

Grudge partition_majorities_ring(std::vector<std::string> nodes, std::mt19937_64& rng) {
  std::shuffle(nodes.begin(), nodes.end(), rng);
  const std::size_t n = nodes.size();
  // An odd window (n/2+1 rounded up to odd) centred on each node: a sees b exactly when
  // their ring distance is at most the half-width, which is symmetric.
  const std::size_t half = n / 2 / 2 + (n / 2) % 2;  // ceil((majority - 1) / 2)
  Grudge g;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      std::size_t d = i > j ? i - j : j - i;
      d = std::min(d, n - d);
      if (d > half) g[nodes[i]].insert(nodes[j]);
    }
  }
  return g;
}

Grudge partition_bridge(std::vector<std::string> nodes, std::mt19937_64& rng) {
  if (nodes.size() < 3) return partition_halves(std::move(nodes), rng);
  std::shuffle(nodes.begin(), nodes.end(), rng);
  auto middle = nodes.begin() + static_cast<std::ptrdiff_t>(nodes.size() / 2);
  // *middle, the first node of the second half, is in neither component: it drops nothing
  // and nobody drops it.
  return complete_grudge({{nodes.begin(), middle}, {middle + 1, nodes.end()}});
}

nlohmann::json grudge_to_json(const Grudge& g) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [node, drops] : g) {
    if (!drops.empty()) j[node] = drops;
  }
  return j;
}

Grudge grudge_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("a grudge must be an object, got " + j.dump());
  Grudge g;
  for (const auto& [node, drops] : j.items()) {
    if (!drops.is_array()) throw std::invalid_argument("grudge of " + node + " must be a list");
    for (const auto& d : drops) {
      if (!d.is_string()) throw std::invalid_argument("grudge of " + node + " must list node names");
      g[node].insert(d.get<std::string>());
    }
  }
  return g;
}

}  // namespace fencecheck
