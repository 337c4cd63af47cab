// The search's memo (search.cpp): the tree of linearized prefixes it has reached, and the
// answer to "was this configuration — this set of linearized ops in this model state —
// reached before?".
//
// Ops are numbered 0, 1, 2 … in invoke order; that number is their rank in the op sets.
//
// What it promises:
//  - Exact. visit() answers kSeen only when a node with an equal set of ops and an equal
//    state exists. Sets are sorted out by a 64-bit Zobrist hash (the XOR of one random key
//    per op, carried from parent to child) and the state; when both agree, the sets are
//    compared by their canonical OpSets ids (op_sets.h), never by trusting the hash. A
//    degenerate hash (key_bits 0: every key equal) makes the memo slow, never wrong.
//  - Cheap when the memo never hits, as in lock histories, where a configuration is
//    reached once: a new node costs an XOR, one probe of the index and one node, and no
//    op set is built at all.
//  - Cheap when it hits often (issue 7: an info op linearized at very different depths on
//    two branches). A node's canonical ids are built the first time it takes part in an
//    exact comparison, from its parent's, which are built the same way; so each node costs
//    at most one OpSets insert over the whole search, and no comparison walks the tree
//    further than the nodes it gives ids to.
//  - A node is 32 bytes (40 with fenced-mutex's state), plus 8 to 16 bytes of index and,
//    once compared, about one 16-byte op-set cell; however long the partition.
//  - The memory of nodes, index and op-set cells is charged to the SearchBudget and given
//    back on destruction. Nodes and index live in a Storage that the caller may hand to
//    the next memo, so that their pages are reused rather than paged in again.
// Not thread-safe: one per search.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "checkers/linear/op_sets.h"
#include "checkers/linear/pod_vector.h"
#include "checkers/linear/search.h"

namespace fencecheck::linear {

template <class Model>
class Memo {
 public:
  using State = typename Model::State;
  using NodeId = std::int32_t;
  static constexpr std::int64_t kSeen = -1;
  static constexpr std::int64_t kNoMemory = -2;

  // One linearized prefix: its last op and the prefix before it. Only the memo reads it.
  struct Node {
    State state;
    NodeId parent;
    std::int32_t op;
    std::uint64_t set_hash;
    OpSets::Id ops, infos;  // the set's canonical ids (Ids below); kNotYet until built
  };
  // Nodes and index, kept by the caller from one memo to the next (a memo clears them).
  struct Storage {
    PodVector<Node> nodes;       // [0] is the empty prefix, in no slot
    std::vector<NodeId> slots;   // open addressing over nodes 1.., by (set_hash, state)
    std::vector<NodeId> chain;   // scratch for canonical()
  };

  // info[i]: op i is an info op (info ops form a set of their own, so that one linearized
  // long after its invoke rebuilds info chunks only). Read at each visit, not copied.
  // key_bits: how many bits of each op's Zobrist key to keep (64; fewer only in tests).
  Memo(SearchBudget& budget, const std::vector<bool>& info, Storage& storage, unsigned key_bits = 64)
      : info_(info), key_mask_(key_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << key_bits) - 1),
        charge_(budget), sets_(budget), nodes_(storage.nodes), slots_(storage.slots), chain_(storage.chain) {
    nodes_.clear();
    slots_.clear();
  }
  Memo(const Memo&) = delete;
  Memo& operator=(const Memo&) = delete;

  // Node 0, the empty prefix in state `init`. False when the budget refuses the memory.
  bool start(const State& init) {
    if (!room()) return false;
    nodes_.push_back(Node{init, -1, -1, 0, OpSets::kEmpty, OpSets::kEmpty});
    return true;
  }

  // Node `parent`'s prefix followed by op i, which reaches state `s`: the id of a new node,
  // kSeen when a node of an equal set and state exists, or kNoMemory.
  std::int64_t visit(NodeId parent, std::int32_t i, const State& s) {
    const std::uint64_t set_hash = nodes_[parent].set_hash ^ key(i);
    const std::uint64_t h = slot_hash(set_hash, s);
    Ids ids{kNotYet, kNotYet};  // of parent's set plus i, once an exact comparison needs them
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t slot = h & mask; slots_[slot] != kFree; slot = (slot + 1) & mask) {
      const NodeId other = slots_[slot];
      if (nodes_[other].set_hash != set_hash || !(nodes_[other].state == s)) continue;
      if (nodes_[other].parent == parent) {  // same set below, so equal iff the same op
        if (nodes_[other].op == i) return kSeen;
        continue;
      }
      if (ids.ops == kNotYet && !(canonical(parent) && with(ids_of(parent), i, ids))) return kNoMemory;
      if (!canonical(other)) return kNoMemory;
      if (ids_of(other) == ids) return kSeen;
    }
    if (!room()) return kNoMemory;
    auto id = static_cast<NodeId>(nodes_.size());
    nodes_.push_back(Node{s, parent, i, set_hash, ids.ops, ids.infos});
    place(id, h);
    return id;
  }

  const State& state(NodeId n) const { return nodes_[n].state; }
  NodeId parent(NodeId n) const { return nodes_[n].parent; }  // -1 for node 0
  std::int32_t op(NodeId n) const { return nodes_[n].op; }
  std::size_t entries() const { return nodes_.empty() ? 0 : nodes_.size() - 1; }  // node 0 aside
  std::size_t bytes_charged() const { return charge_.charged() + sets_.bytes_charged(); }
  std::size_t set_cells() const { return sets_.cells(); }  // op-set cells built so far

 private:
  // Never an OpSets id: OpSets hands out ids below kNoMemory - 1.
  static constexpr OpSets::Id kNotYet = OpSets::kNoMemory - 1;

  struct Ids {
    OpSets::Id ops;    // the non-info ops of the set, by rank
    OpSets::Id infos;  // the info ops of the set, by rank
    bool operator==(const Ids&) const = default;
  };

  std::uint64_t key(std::int32_t i) const { return mix64(0x5eedULL + static_cast<std::uint64_t>(i)) & key_mask_; }
  Ids ids_of(NodeId n) const { return {nodes_[n].ops, nodes_[n].infos}; }

  // `set` with op i added, into `out`; false without memory.
  bool with(Ids set, std::int32_t i, Ids& out) {
    OpSets::Id& grown = info_[i] ? set.infos : set.ops;
    grown = sets_.insert(grown, static_cast<std::uint32_t>(i));
    if (grown == OpSets::kNoMemory) return false;
    out = set;
    return true;
  }

  // Gives node n its ids, and its ancestors that lack them theirs; false without memory.
  bool canonical(NodeId n) { return nodes_[n].ops != kNotYet || build_ids(n); }

  bool build_ids(NodeId n) {
    chain_.clear();
    for (; nodes_[n].ops == kNotYet; n = nodes_[n].parent) chain_.push_back(n);
    for (std::size_t k = chain_.size(); k-- > 0;) {
      Node& node = nodes_[chain_[k]];
      Ids ids;
      if (!with(ids_of(node.parent), node.op, ids)) return false;
      node.ops = ids.ops;
      node.infos = ids.infos;
    }
    return true;
  }

  static std::uint64_t slot_hash(std::uint64_t set_hash, const State& s) {
    return mix64(set_hash ^ (Model::hash(s) * 0x9e3779b97f4a7c15ULL));
  }

  // Room for one more node. The index is a power of two, and nodes get room for half as
  // many: the index is at most half full.
  bool room() { return 2 * nodes_.size() < slots_.size() || grow(); }

  // Makes the room. The first call sizes index and nodes for one node per op (the search
  // of a valid history ends at least that deep) when the budget allows, so that most
  // searches never rebuild the index; later calls double both. (Node room that is never
  // written costs no memory: PodVector.)
  bool grow() {
    std::size_t slots = std::max<std::size_t>(kMinSlots, 2 * slots_.size());
    const std::size_t wanted = std::bit_ceil(2 * (info_.size() + 1));
    if (slots_.empty() && wanted > slots && charge_.add_if_room(bytes_for(wanted))) {
      slots = wanted;
    } else if (!charge_.add(bytes_for(slots) - bytes_for(slots_.size()))) {
      return false;
    }
    nodes_.reserve(slots / 2);
    slots_.assign(slots, kFree);
    for (NodeId id = 1; id < static_cast<NodeId>(nodes_.size()); ++id) {
      place(id, slot_hash(nodes_[id].set_hash, nodes_[id].state));
    }
    return true;
  }

  // The memory of an index of `slots` slots and of its nodes.
  static std::size_t bytes_for(std::size_t slots) { return slots / 2 * sizeof(Node) + slots * sizeof(NodeId); }

  void place(NodeId id, std::uint64_t h) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t s = h & mask;
    while (slots_[s] != kFree) s = (s + 1) & mask;
    slots_[s] = id;
  }

  static constexpr NodeId kFree = -1;
  static constexpr std::size_t kMinSlots = 2048;

  const std::vector<bool>& info_;
  const std::uint64_t key_mask_;
  BudgetCharge charge_;  // for nodes_ and slots_
  OpSets sets_;
  PodVector<Node>& nodes_;
  std::vector<NodeId>& slots_;
  std::vector<NodeId>& chain_;
};

}  // namespace fencecheck::linear
