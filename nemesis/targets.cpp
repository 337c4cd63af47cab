#include "nemesis/targets.h"

#include <algorithm>
#include <stdexcept>

namespace fencecheck {

const std::vector<std::string>& target_specs() {
  static const std::vector<std::string> specs = {"random", "one", "minority", "majority", "all"};
  return specs;
}

bool is_target_spec(std::string_view spec) {
  const auto& specs = target_specs();
  return std::find(specs.begin(), specs.end(), spec) != specs.end();
}

std::vector<std::string> pick_targets(const std::vector<std::string>& nodes, std::string_view spec,
                                      std::mt19937_64& rng) {
  std::vector<std::string> shuffled = nodes;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  const std::size_t n = nodes.size();
  std::size_t count = n;
  if (spec == "random") count = n == 0 ? 0 : 1 + rng() % n;
  else if (spec == "one") count = 1;
  else if (spec == "minority") count = std::max<std::size_t>(1, n / 2);  // majority(n) - 1
  else if (spec == "majority") count = n / 2 + 1;
  else if (spec != "all") throw std::invalid_argument("unknown target spec \"" + std::string(spec) + "\"");
  shuffled.resize(std::min(count, n));
  std::sort(shuffled.begin(), shuffled.end());
  return shuffled;
}

}  // namespace fencecheck
