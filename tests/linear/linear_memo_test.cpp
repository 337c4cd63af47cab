// The search's memo must be exact and must recognize a set of ops however it was reached
// (issue 7): OpSets gives one id per distinct set; Memo tells configurations apart exactly
// even when every set hashes alike, and builds no op set when nothing collides (the lock
// histories' case, whose search the op sets had made twice as slow); and a history in
// which an info write can be linearized at any depth stays decidable, with a memo linear
// in its length.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "checkers/linear/memo.h"
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

// Random walks over a memo of register states, against a reference of every (set, state)
// visited: visit() must say kSeen exactly when the reference has the configuration. With
// key_bits 0 every set hashes alike, so every visit meets configurations of other sets in
// the same state, and only the exact comparison keeps them apart; a memo that trusted its
// hash would answer kSeen for them and fail here.
void expect_exact_memo(unsigned key_bits) {
  using Memo = linear::Memo<linear::RegisterModel>;
  constexpr int kOps = 150;
  std::vector<bool> info(kOps);
  for (int i = 0; i < kOps; ++i) info[i] = i % 7 == 3;  // info ops form a set of their own
  linear::SearchBudget budget;
  Memo::Storage storage;
  for (int round = 0; round < 2; ++round) {  // the second memo reuses the first one's storage
    Memo memo(budget, info, storage, key_bits);
    ASSERT_TRUE(memo.start({}));
    std::mt19937_64 rng(11 + round);
    std::map<std::pair<std::set<int>, std::int64_t>, std::int64_t> seen;  // (set, state) -> node
    std::vector<std::set<int>> set_of{{}};                                // by node
    int hits = 0;
    for (int step = 0; step < 20000; ++step) {
      auto parent = static_cast<Memo::NodeId>(rng() % set_of.size());
      // Few ops and states, so that equal sets are often reached along different paths.
      auto op = static_cast<std::int32_t>(rng() % (set_of[parent].size() < 12 ? 16 : kOps));
      if (set_of[parent].count(op)) continue;
      linear::RegisterModel::State state{static_cast<std::int64_t>(rng() % 2)};
      std::set<int> set = set_of[parent];
      set.insert(op);
      std::int64_t got = memo.visit(parent, op, state);
      ASSERT_NE(got, Memo::kNoMemory);
      auto [it, fresh] = seen.emplace(std::pair{set, state.value}, got);
      if (!fresh) {
        ASSERT_EQ(got, Memo::kSeen) << "step " << step << ": a configuration visited before was not recognized";
        ++hits;
        continue;
      }
      ASSERT_GE(got, 0) << "step " << step << ": a new configuration was taken for one visited before";
      ASSERT_EQ(static_cast<std::size_t>(got), set_of.size());
      set_of.push_back(set);
      EXPECT_EQ(memo.parent(static_cast<Memo::NodeId>(got)), parent);
      EXPECT_EQ(memo.op(static_cast<Memo::NodeId>(got)), op);
    }
    EXPECT_GT(hits, 1000) << "the walk should reach equal sets along different paths";
    EXPECT_EQ(memo.entries(), seen.size());
  }
}

TEST(Memo, ExactWithItsHash) { expect_exact_memo(64); }
TEST(Memo, ExactWhenEverySetHashesAlike) { expect_exact_memo(0); }
TEST(Memo, ExactWhenSetsOftenHashAlike) { expect_exact_memo(3); }

// A lock history's search reaches each configuration once: the memo must then build no
// op set at all (building one per node made the mutex search of issue 7's fix 2x slower).
// Only a configuration met again along another path makes it build the sets it compares.
TEST(Memo, BuildsOpSetsOnlyForConfigurationsMetAgain) {
  using Memo = linear::Memo<linear::MutexModel>;
  const std::vector<bool> info(1000, false);
  linear::SearchBudget budget;
  Memo::Storage storage;
  Memo memo(budget, info, storage);
  ASSERT_TRUE(memo.start({}));
  Memo::NodeId at = 0;
  for (std::int32_t i = 0; i < 1000; i += 2) {  // process i acquires, then releases
    at = static_cast<Memo::NodeId>(memo.visit(at, i, {i}));
    at = static_cast<Memo::NodeId>(memo.visit(at, i + 1, {}));
    ASSERT_GT(at, 0);
  }
  EXPECT_EQ(memo.set_cells(), 0u);
  // {0, 1, 2, 3} again, the other pair first: both paths get their sets, and it is a hit.
  auto two = memo.visit(0, 2, {2});
  ASSERT_GT(two, 0);
  auto three = memo.visit(static_cast<Memo::NodeId>(two), 3, {});
  ASSERT_GT(three, 0);
  auto zero = memo.visit(static_cast<Memo::NodeId>(three), 0, {0});
  ASSERT_GT(zero, 0);
  EXPECT_EQ(memo.visit(static_cast<Memo::NodeId>(zero), 1, {}), Memo::kSeen);
  EXPECT_GT(memo.set_cells(), 0u);
  EXPECT_LT(memo.set_cells(), 20u) << "only the nodes compared need their sets";
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
