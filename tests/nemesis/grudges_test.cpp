// Jepsen's partition shapes: who drops whom, symmetry, and that the shapes are what their
// names promise.
#include "nemesis/grudges.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fencecheck {
namespace {

const std::vector<std::string> kNodes = {"n1", "n2", "n3", "n4", "n5"};

bool drops(const Grudge& g, const std::string& a, const std::string& b) {
  auto it = g.find(a);
  return it != g.end() && it->second.count(b) > 0;
}

void expect_symmetric(const Grudge& g, const std::vector<std::string>& nodes) {
  for (const auto& a : nodes) {
    EXPECT_FALSE(drops(g, a, a)) << a << " drops itself";
    for (const auto& b : nodes) EXPECT_EQ(drops(g, a, b), drops(g, b, a)) << a << " vs " << b;
  }
}

std::size_t seen_by(const Grudge& g, const std::string& a, const std::vector<std::string>& nodes) {
  auto it = g.find(a);
  return nodes.size() - (it == g.end() ? 0 : it->second.size());
}

TEST(Grudges, HalvesSplitInTwoSmallerFirst) {
  std::mt19937_64 rng(3);
  Grudge g = partition_halves(kNodes, rng);
  expect_symmetric(g, kNodes);
  std::vector<std::size_t> sizes;
  for (const auto& n : kNodes) sizes.push_back(seen_by(g, n, kNodes));
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 2, 3, 3, 3}));
}

TEST(Grudges, OneNodeAloneAndIsolate) {
  std::mt19937_64 rng(3);
  Grudge g = partition_one(kNodes, rng);
  expect_symmetric(g, kNodes);
  int alone = 0;
  for (const auto& n : kNodes) alone += seen_by(g, n, kNodes) == 1;
  EXPECT_EQ(alone, 1);
  Grudge leader = isolate("n3", kNodes);
  EXPECT_EQ(leader.at("n3"), (std::set<std::string>{"n1", "n2", "n4", "n5"}));
  EXPECT_EQ(leader.at("n1"), std::set<std::string>{"n3"});
}

TEST(Grudges, MajoritiesRingEveryNodeSeesADifferentMajority) {
  for (std::size_t n : {4u, 5u, 6u, 7u, 9u}) {
    std::vector<std::string> nodes(kNodes.begin(), kNodes.end());
    while (nodes.size() < n) nodes.push_back("c" + std::to_string(nodes.size()));
    nodes.resize(n);
    std::mt19937_64 rng(n);
    Grudge g = partition_majorities_ring(nodes, rng);
    expect_symmetric(g, nodes);
    std::set<std::set<std::string>> views;
    for (const auto& a : nodes) {
      EXPECT_GE(seen_by(g, a, nodes), n / 2 + 1) << n << " nodes: " << a << " must see a majority";
      std::set<std::string> view;
      for (const auto& b : nodes) {
        if (!drops(g, a, b)) view.insert(b);
      }
      views.insert(view);
    }
    EXPECT_EQ(views.size(), n) << "no two nodes see the same majority";
  }
}

TEST(Grudges, BridgeSeesBothHalvesThatDoNotSeeEachOther) {
  std::mt19937_64 rng(5);
  Grudge g = partition_bridge(kNodes, rng);
  expect_symmetric(g, kNodes);
  std::vector<std::string> bridges;
  for (const auto& n : kNodes) {
    if (seen_by(g, n, kNodes) == kNodes.size()) bridges.push_back(n);
  }
  ASSERT_EQ(bridges.size(), 1u);
  for (const auto& n : kNodes) {
    if (n != bridges[0]) {
      EXPECT_LT(seen_by(g, n, kNodes), kNodes.size());
    }
  }
}

TEST(Grudges, JsonRoundTripAndBadShapes) {
  Grudge g = isolate("n1", {"n1", "n2"});
  EXPECT_EQ(grudge_from_json(grudge_to_json(g)), g);
  EXPECT_EQ(grudge_to_json(Grudge{{"n1", {}}}), nlohmann::json::object()) << "empty entries left out";
  EXPECT_THROW(grudge_from_json(nlohmann::json::array()), std::invalid_argument);
  EXPECT_THROW(grudge_from_json({{"n1", "n2"}}), std::invalid_argument);
  EXPECT_THROW(grudge_from_json({{"n1", {1}}}), std::invalid_argument);
}

}  // namespace
}  // namespace fencecheck
