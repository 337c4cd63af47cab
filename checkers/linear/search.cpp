#include "checkers/linear/search.h"

#include <algorithm>
#include <tuple>

#include "checkers/linear/op_sets.h"

namespace fencecheck::linear {

void SearchBudget::set_time_limit(double seconds) {
  auto now = std::chrono::steady_clock::now();
  if (!(seconds > 0)) {
    deadline = now;
    return;
  }
  // Clamp so that absurd limits (1e300 s) do not overflow the clock.
  double capped = std::min(seconds, 1e9);
  deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(capped));
}

namespace {

using Result = SearchOutcome::Result;

// One search over one partition. Entries of the doubly linked list are the calls and
// returns of the searched ops in time order (a call before a return at equal times, since
// times compare strictly); info ops have no return entry.
//
// Each memo node is one linearized prefix, (op, parent) in the search tree, with its state
// and its set of ops as OpSets ids, which are canonical, so "was (set, state) visited?" is
// one exact hash-table probe that compares integers. (The search used to compare sets by
// walking both tree paths up to their common ancestor: when an info op was linearized at
// very different depths on two branches, every memo hit cost a walk and a sort as long as
// the history, issue 7.) A set is two OpSets ids over the ops' ranks in invoke order: the
// non-info ops, and the info ops apart. Adding a rank rebuilds the cells of the higher
// 64-rank chunks. Above a non-info op, its set only holds ops invoked while it was pending
// (just-in-time linearization only takes ops invoked before the earliest pending return),
// so that is a chunk or two; an info op may be linearized long after its invoke, and kept
// apart it rebuilds info chunks only.
// A memo entry costs its node (32 bytes; 40 for fenced-mutex), its slot, and about one
// 16-byte cell with its slot, however long the partition (a bitset would cost n/8 bytes).
template <class Model>
class Search {
  using State = typename Model::State;

 public:
  Search(const Partition& p, ModelKind model, SearchBudget& budget)
      : p_(p), budget_(budget), charge_(budget), sets_(budget) {
    std::vector<bool> keep = useful_ops(model, p);
    for (std::uint32_t i = 0; i < p.ops.size(); ++i) {
      if (!Model::applies(p.ops[i].kind)) continue;
      ++out_.ops;
      if (keep[i]) ops_.push_back(i);
    }
    out_.searched = ops_.size();
    build_list();
  }

  SearchOutcome run() {
    auto start = std::chrono::steady_clock::now();
    out_.result = search();
    out_.memo_entries = nodes_.size() - 1;
    out_.memo_bytes = charge_.charged() + sets_.bytes_charged();
    out_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (out_.result == Result::kNotLinearizable) explain();
    return std::move(out_);
  }

 private:
  struct Node {
    State state;
    std::int32_t parent;
    std::int32_t op;
    std::int32_t depth;
    OpSets::Id ops;    // the non-info ops linearized, by call_rank_
    OpSets::Id infos;  // the info ops linearized, by call_rank_
  };

  const LinOp& op(std::int32_t i) const { return p_.ops[ops_[i]]; }

  void build_list() {
    const auto n = static_cast<std::int32_t>(ops_.size());
    std::vector<std::tuple<Nanos, int, std::int32_t>> order;  // (time, 0 call / 1 return, op)
    order.reserve(2 * ops_.size());
    for (std::int32_t i = 0; i < n; ++i) {
      order.emplace_back(op(i).call, 0, i);
      if (!op(i).info) {
        order.emplace_back(op(i).ret, 1, i);
        ++required_;
      }
    }
    std::sort(order.begin(), order.end());
    const auto entries = static_cast<std::int32_t>(order.size());
    head_ = entries;
    tail_ = entries + 1;
    next_.resize(static_cast<std::size_t>(entries) + 2);
    prev_.resize(next_.size());
    entry_op_.resize(order.size());
    is_call_.resize(order.size());
    call_entry_.assign(ops_.size(), -1);
    ret_entry_.assign(ops_.size(), -1);
    call_rank_.assign(ops_.size(), 0);
    std::uint32_t calls = 0;
    for (std::int32_t e = 0; e < entries; ++e) {
      auto [time, is_return, i] = order[e];
      entry_op_[e] = i;
      is_call_[e] = is_return == 0;
      (is_return ? ret_entry_ : call_entry_)[i] = e;
      if (!is_return) call_rank_[i] = calls++;
      prev_[e] = e == 0 ? head_ : e - 1;
      next_[e] = e + 1 == entries ? tail_ : e + 1;
    }
    next_[head_] = entries == 0 ? tail_ : 0;
    prev_[tail_] = entries == 0 ? head_ : entries - 1;
  }

  void unlink(std::int32_t e) {
    next_[prev_[e]] = next_[e];
    prev_[next_[e]] = prev_[e];
  }
  void relink(std::int32_t e) {
    next_[prev_[e]] = e;
    prev_[next_[e]] = e;
  }
  void lift(std::int32_t i) {
    unlink(call_entry_[i]);
    if (ret_entry_[i] >= 0) unlink(ret_entry_[i]);
  }
  void unlift(std::int32_t i) {  // exact reverse of lift, as dancing links require
    if (ret_entry_[i] >= 0) relink(ret_entry_[i]);
    relink(call_entry_[i]);
  }

  static std::uint64_t slot_hash(OpSets::Id ops, OpSets::Id infos, const State& s) {
    std::uint64_t sets = (static_cast<std::uint64_t>(ops) << 32) | infos;
    return mix64(sets ^ (Model::hash(s) * 0x9e3779b97f4a7c15ULL));
  }

  bool grow_memo() {
    if (nodes_.size() == nodes_.capacity()) {
      std::size_t cap = std::max<std::size_t>(1024, nodes_.capacity() * 2);
      if (!charge_.add((cap - nodes_.capacity()) * sizeof(Node))) return false;
      nodes_.reserve(cap);
    }
    if (2 * nodes_.size() >= slots_.size()) {
      std::size_t size = std::max<std::size_t>(4096, slots_.size() * 2);
      if (!charge_.add((size - slots_.size()) * sizeof(std::uint32_t))) return false;
      slots_.assign(size, kEmpty);
      for (std::uint32_t id = 1; id < nodes_.size(); ++id) {
        const Node& n = nodes_[id];
        place(id, slot_hash(n.ops, n.infos, n.state));
      }
    }
    return true;
  }

  void place(std::uint32_t id, std::uint64_t h) {
    std::size_t mask = slots_.size() - 1;
    std::size_t s = h & mask;
    while (slots_[s] != kEmpty) s = (s + 1) & mask;
    slots_[s] = id;
  }

  // The node for (ops, infos, s) reached from `parent` by op i: a new node, kSeen when
  // that configuration was visited before, or kNoMemory. Exact: set ids are canonical.
  std::int64_t visit(OpSets::Id ops, OpSets::Id infos, const State& s, std::int32_t parent, std::int32_t i) {
    std::uint64_t h = slot_hash(ops, infos, s);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t slot = h & mask; slots_[slot] != kEmpty; slot = (slot + 1) & mask) {
      const Node& n = nodes_[slots_[slot]];
      if (n.ops == ops && n.infos == infos && n.state == s) return kSeen;
    }
    if (!grow_memo()) return kNoMemory;
    auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(Node{s, parent, i, nodes_[parent].depth + 1, ops, infos});
    place(id, h);
    return id;
  }

  Result over_budget() const {
    if (budget_.stop.load(std::memory_order_relaxed)) return Result::kStopped;
    if (std::chrono::steady_clock::now() > budget_.deadline) return Result::kOutOfTime;
    return Result::kLinearizable;  // meaning: within budget
  }

  // The search's position: the current node (its prefix) and state.
  struct Position {
    std::int32_t node = 0;
    State state = Model::init();
    std::size_t required_left = 0;
  };

  enum class Try { kPushed, kRefused, kSeen, kNoMemory };

  // Linearizes op i next, if the model allows it and the configuration is new.
  Try try_push(Position& at, std::int32_t i) {
    ++out_.steps;
    State next = at.state;
    if (!Model::step(at.state, op(i), next)) return Try::kRefused;
    OpSets::Id ops = nodes_[at.node].ops, infos = nodes_[at.node].infos;
    OpSets::Id& grown = op(i).info ? infos : ops;
    grown = sets_.insert(grown, call_rank_[i]);
    if (grown == OpSets::kNoMemory) return Try::kNoMemory;
    std::int64_t node = visit(ops, infos, next, at.node, i);
    if (node == kNoMemory) return Try::kNoMemory;
    if (node == kSeen) return Try::kSeen;
    lift(i);
    at.node = static_cast<std::int32_t>(node);
    at.state = next;
    if (!op(i).info) --at.required_left;
    auto depth = static_cast<std::size_t>(nodes_[at.node].depth);
    if (depth > out_.deepest) {
      out_.deepest = depth;
      deepest_node_ = at.node;
      blocked_ = -1;
    }
    return Try::kPushed;
  }

  // Undoes the last push; returns its op.
  std::int32_t pop(Position& at) {
    std::int32_t top = nodes_[at.node].op;
    at.node = nodes_[at.node].parent;
    unlift(top);
    at.state = nodes_[at.node].state;
    if (!op(top).info) ++at.required_left;
    return top;
  }

  // A pure op (a read) that the state allows now may be linearized now in every
  // linearization that exists from here: its invoke is past and everything that returned
  // before its invoke is already linearized, so moving it forward breaks no real-time
  // order, and it changes no state. Taking it first loses nothing, and if that fails this
  // prefix fails. Returns kSeen for "this prefix fails", kRefused when no pure op applies.
  Try take_pure_op(Position& at) {
    for (std::int32_t e = next_[head_]; e != tail_ && is_call_[e]; e = next_[e]) {
      std::int32_t i = entry_op_[e];
      if (!Model::is_pure(op(i))) continue;
      State unused = at.state;
      if (!Model::step(at.state, op(i), unused)) continue;
      return try_push(at, i);
    }
    return Try::kRefused;
  }

  Result search() {
    if (required_ == 0) return Result::kLinearizable;
    if (!grow_memo()) return Result::kOutOfMemory;
    nodes_.push_back(Node{Model::init(), -1, -1, 0, OpSets::kEmpty, OpSets::kEmpty});
    Position at;
    at.required_left = required_;
    bool fresh = true;  // at a prefix not scanned yet
    std::int32_t e = next_[head_];
    for (std::uint64_t iter = 1;; ++iter) {
      if ((iter & 0x3ff) == 0) {
        if (Result r = over_budget(); r != Result::kLinearizable) return r;
      }
      if (at.required_left == 0) return Result::kLinearizable;
      bool backtrack = false;
      if (fresh) {
        Try t = take_pure_op(at);
        if (t == Try::kNoMemory) return Result::kOutOfMemory;
        if (t == Try::kPushed) continue;
        fresh = false;
        e = next_[head_];
        backtrack = t == Try::kSeen;
      }
      if (!backtrack) {
        if (e == tail_) return Result::kLinearizable;  // only info calls were left
        std::int32_t i = entry_op_[e];
        if (is_call_[e]) {
          Try t = try_push(at, i);
          if (t == Try::kNoMemory) return Result::kOutOfMemory;
          fresh = t == Try::kPushed;
          e = next_[e];
          continue;
        }
        // A return: op i cannot be linearized after the current prefix.
        if (static_cast<std::size_t>(nodes_[at.node].depth) == out_.deepest && blocked_ < 0) blocked_ = i;
      }
      // Backtrack; past a pure op taken first, its siblings are no better (take_pure_op).
      std::int32_t top;
      do {
        if (at.node == 0) return Result::kNotLinearizable;
        top = pop(at);
      } while (Model::is_pure(op(top)));
      e = next_[call_entry_[top]];
    }
  }

  void explain() {
    for (std::int32_t n = deepest_node_; n > 0; n = nodes_[n].parent) {
      out_.prefix.push_back(ops_[nodes_[n].op]);
    }
    std::reverse(out_.prefix.begin(), out_.prefix.end());
    if (blocked_ >= 0) out_.blocked_op = ops_[blocked_];
    out_.state_after_prefix = Model::describe(nodes_[deepest_node_].state, p_);
  }

  static constexpr std::uint32_t kEmpty = 0xffffffffU;
  static constexpr std::int64_t kSeen = -1;
  static constexpr std::int64_t kNoMemory = -2;

  const Partition& p_;
  SearchBudget& budget_;
  BudgetCharge charge_;  // for nodes_ and slots_
  OpSets sets_;
  SearchOutcome out_;
  std::vector<std::uint32_t> ops_;  // searched op -> index in p_.ops
  std::size_t required_ = 0;  // non-info searched ops
  std::vector<std::int32_t> next_, prev_, entry_op_, call_entry_, ret_entry_;
  std::vector<std::uint32_t> call_rank_;  // op -> its place in invoke order
  std::vector<bool> is_call_;
  std::int32_t head_ = 0, tail_ = 0;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> slots_;
  std::int32_t deepest_node_ = 0;
  std::int32_t blocked_ = -1;
};

template <class Model>
SearchOutcome run(const Partition& p, ModelKind m, SearchBudget& budget) {
  return Search<Model>(p, m, budget).run();
}

}  // namespace

SearchOutcome search_partition(ModelKind model, const Partition& partition, SearchBudget& budget) {
  switch (model) {
    case ModelKind::kMutex: return run<MutexModel>(partition, model, budget);
    case ModelKind::kFencedMutex: return run<FencedMutexModel>(partition, model, budget);
    case ModelKind::kRegister: return run<RegisterModel>(partition, model, budget);
    case ModelKind::kCasRegister: return run<CasRegisterModel>(partition, model, budget);
  }
  return {};
}

}  // namespace fencecheck::linear
