// The search's memo must be exact and must recognize a set of ops however it was reached
// (issue 7): OpSets gives one id per distinct set, and a history in which an info write
// can be linearized at any depth stays decidable, with a memo linear in its length.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "checkers/linear/op_sets.h"
#include "tests/linear/test_history.h"

namespace fencecheck {
namespace {

using linear::OpSets;
using testing::TestHistory;
using testing::check_linearizable;

TEST(OpSets, OneIdPerDistinctSetWhateverTheOrderOfInsertion) {
  linear::SearchBudget budget;
  OpSets sets(budget);
  std::mt19937_64 rng(7);
  std::map<std::set<std::uint32_t>, OpSets::Id> id_of;
  std::map<OpSets::Id, std::set<std::uint32_t>> set_of;
  for (int round = 0; round < 2000; ++round) {
    // Ranks over several 64-rank chunks, some sets dense in one chunk, some sparse.
    const std::uint32_t span = round % 2 ? 64 : 400;
    std::vector<std::uint32_t> ranks;
    for (std::size_t n = rng() % 40; ranks.size() < n;) {
      auto r = static_cast<std::uint32_t>(rng() % span);
      if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) ranks.push_back(r);
    }
    const std::set<std::uint32_t> members(ranks.begin(), ranks.end());
    for (int order = 0; order < 3; ++order) {
      std::shuffle(ranks.begin(), ranks.end(), rng);
      OpSets::Id id = OpSets::kEmpty;
      for (std::uint32_t r : ranks) id = sets.insert(id, r);
      ASSERT_NE(id, OpSets::kNoMemory);
      auto [it, fresh] = id_of.emplace(members, id);
      ASSERT_EQ(it->second, id) << "one set, two ids";
      auto [back, new_id] = set_of.emplace(id, members);
      ASSERT_EQ(back->second, members) << "one id, two sets";
      ASSERT_EQ(fresh, new_id);
    }
  }
  EXPECT_EQ(sets.insert(OpSets::kEmpty, 5), sets.insert(sets.insert(OpSets::kEmpty, 5), 5));
}

TEST(OpSets, ChargesTheBudgetAndGivesItBack) {
  linear::SearchBudget budget;
  budget.memory_limit = 64 * 1024;
  {
    OpSets sets(budget);
    OpSets::Id id = OpSets::kEmpty;
    std::uint32_t r = 0;
    // Each rank in a chunk of its own: one new cell per insert.
    for (; r < 64 * 100'000 && id != OpSets::kNoMemory; r += 64) id = sets.insert(OpSets::kEmpty, r);
    EXPECT_EQ(id, OpSets::kNoMemory) << "a 64 KiB budget held " << sets.cells() << " cells";
    EXPECT_GT(budget.memory_used.load(), 0u);
  }
  EXPECT_EQ(budget.memory_used.load(), 0u);
}

// Process 0 alternates write 0 / read 0 `pairs` times; an info write of 1, invoked first,
// may take effect in any gap after a read, where the next write hides it. The search tries
// it in every gap, and each of those branches reaches the sets of the branch that took it
// first, in another order: the memo must see them as equal (else the memo grows with
// pairs², and before issue 7 each such hit cost a walk as long as the history) and must
// not see unequal sets as equal (else a valid ending is missed).
TestHistory info_write_at_any_depth(int pairs) {
  TestHistory h;
  h.inv(0, 100, "write", "{\"token\":null,\"value\":1}").info(1, 100);
  Nanos t = 2;
  for (int k = 0; k < pairs; ++k, t += 4) {
    h.inv(t, 0, "write", "{\"token\":null,\"value\":0}").ok(t + 1, 0);
    h.inv(t + 2, 0, "read").ok(t + 3, 0, "0");
  }
  h.inv(t, 0, "read").ok(t + 1, 0, "1");  // needs the info write last
  return h;
}

TEST(LinearizableMemo, InfoWriteLinearizedAtAnyDepthIsFound) {
  const int pairs = 300;
  auto r = check_linearizable(info_write_at_any_depth(pairs).events, "register");
  ASSERT_EQ(r.verdict, Verdict::kValid) << r.summary;
}

TEST(LinearizableMemo, SetsReachedInDifferentOrdersAreOneEntry) {
  const int pairs = 300;
  TestHistory h = info_write_at_any_depth(pairs);
  h.inv(4 * pairs + 10, 0, "read").ok(4 * pairs + 11, 0, "0");  // nothing wrote 0 after the 1
  auto r = check_linearizable(h.events, "register");
  ASSERT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_LT(r.stats["memo_entries"].get<int>(), 10 * pairs) << "equal sets were not merged";
}

}  // namespace
}  // namespace fencecheck
