#include "checkers/linear/search.h"

#include <algorithm>
#include <tuple>

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
// times compare strictly); info ops have no return entry. Each memo node records one
// linearized prefix as (op, parent): the nodes form the search tree, so the set of ops of
// a node is its path to the root, and two nodes' sets are compared by walking both paths
// up to their common ancestor. That keeps a memo entry at ~40 bytes however long the
// partition, where a bitset per entry would cost n/8 bytes.
template <class Model>
class Search {
  using State = typename Model::State;

 public:
  Search(const Partition& p, ModelKind model, SearchBudget& budget) : p_(p), budget_(budget) {
    std::vector<bool> keep = useful_ops(model, p);
    for (std::uint32_t i = 0; i < p.ops.size(); ++i) {
      if (!Model::applies(p.ops[i].kind)) continue;
      ++out_.ops;
      if (keep[i]) ops_.push_back(i);
    }
    out_.searched = ops_.size();
    build_list();
  }

  ~Search() { budget_.memory_used -= charged_; }

  SearchOutcome run() {
    auto start = std::chrono::steady_clock::now();
    out_.result = search();
    out_.memo_entries = nodes_.size() - 1;
    out_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (out_.result == Result::kNotLinearizable) explain();
    return std::move(out_);
  }

 private:
  struct Node {
    std::uint64_t set_hash;
    State state;
    std::int32_t parent;
    std::int32_t op;
    std::int32_t depth;
  };

  const LinOp& op(std::int32_t i) const { return p_.ops[ops_[i]]; }

  void build_list() {
    const auto n = static_cast<std::int32_t>(ops_.size());
    std::vector<std::tuple<Nanos, int, std::int32_t>> order;  // (time, 0 call / 1 return, op)
    order.reserve(2 * ops_.size());
    zobrist_.resize(ops_.size());
    for (std::int32_t i = 0; i < n; ++i) {
      order.emplace_back(op(i).call, 0, i);
      if (!op(i).info) {
        order.emplace_back(op(i).ret, 1, i);
        ++required_;
      }
      zobrist_[i] = mix64(0x5eedULL + static_cast<std::uint64_t>(i));
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
    for (std::int32_t e = 0; e < entries; ++e) {
      auto [time, is_return, i] = order[e];
      entry_op_[e] = i;
      is_call_[e] = is_return == 0;
      (is_return ? ret_entry_ : call_entry_)[i] = e;
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

  // Adds `bytes` to the shared budget; false when that would exceed the limit.
  bool charge(std::size_t bytes) {
    std::size_t used = budget_.memory_used.fetch_add(bytes) + bytes;
    charged_ += bytes;
    return used <= budget_.memory_limit;
  }

  static std::uint64_t slot_hash(std::uint64_t set_hash, const State& s) {
    return mix64(set_hash ^ (Model::hash(s) * 0x9e3779b97f4a7c15ULL));
  }

  bool grow_memo() {
    if (nodes_.size() == nodes_.capacity()) {
      std::size_t cap = std::max<std::size_t>(1024, nodes_.capacity() * 2);
      if (!charge((cap - nodes_.capacity()) * sizeof(Node))) return false;
      nodes_.reserve(cap);
    }
    if (2 * nodes_.size() >= slots_.size()) {
      std::size_t size = std::max<std::size_t>(4096, slots_.size() * 2);
      if (!charge((size - slots_.size()) * sizeof(std::uint32_t))) return false;
      slots_.assign(size, kEmpty);
      for (std::uint32_t id = 1; id < nodes_.size(); ++id) {
        place(id, slot_hash(nodes_[id].set_hash, nodes_[id].state));
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

  // Is the set of node `n` equal to the set of node `parent` plus op `i`? Both paths are in
  // one tree and the sets have equal sizes, so walk them up in step to their meeting point.
  bool same_set(std::uint32_t n, std::int32_t parent, std::int32_t i) {
    const Node& node = nodes_[n];
    if (node.depth != nodes_[parent].depth + 1) return false;
    if (node.parent == parent) return node.op == i;
    mine_.assign(1, node.op);
    theirs_.assign(1, i);
    std::int32_t a = node.parent, b = parent;
    while (a != b) {
      mine_.push_back(nodes_[a].op);
      theirs_.push_back(nodes_[b].op);
      a = nodes_[a].parent;
      b = nodes_[b].parent;
    }
    std::sort(mine_.begin(), mine_.end());
    std::sort(theirs_.begin(), theirs_.end());
    return mine_ == theirs_;
  }

  // The node for (parent's set + op i, state): a new node, kSeen when that configuration
  // was visited before, or kNoMemory.
  std::int64_t visit(std::uint64_t set_hash, const State& s, std::int32_t parent, std::int32_t i) {
    std::uint64_t h = slot_hash(set_hash, s);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t slot = h & mask; slots_[slot] != kEmpty; slot = (slot + 1) & mask) {
      const Node& n = nodes_[slots_[slot]];
      if (n.set_hash == set_hash && n.state == s && same_set(slots_[slot], parent, i)) return kSeen;
    }
    if (!grow_memo()) return kNoMemory;
    auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(Node{set_hash, s, parent, i, nodes_[parent].depth + 1});
    place(id, h);
    return id;
  }

  Result over_budget() const {
    if (budget_.stop.load(std::memory_order_relaxed)) return Result::kStopped;
    if (std::chrono::steady_clock::now() > budget_.deadline) return Result::kOutOfTime;
    return Result::kLinearizable;  // meaning: within budget
  }

  // The search's position: the current node (its prefix), state and set hash.
  struct Position {
    std::int32_t node = 0;
    State state = Model::init();
    std::uint64_t set_hash = 0;
    std::size_t required_left = 0;
  };

  enum class Try { kPushed, kRefused, kSeen, kNoMemory };

  // Linearizes op i next, if the model allows it and the configuration is new.
  Try try_push(Position& at, std::int32_t i) {
    ++out_.steps;
    State next = at.state;
    if (!Model::step(at.state, op(i), next)) return Try::kRefused;
    std::uint64_t next_hash = at.set_hash ^ zobrist_[i];
    std::int64_t node = visit(next_hash, next, at.node, i);
    if (node == kNoMemory) return Try::kNoMemory;
    if (node == kSeen) return Try::kSeen;
    lift(i);
    at.node = static_cast<std::int32_t>(node);
    at.state = next;
    at.set_hash = next_hash;
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
    at.set_hash = nodes_[at.node].set_hash;
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
    nodes_.push_back(Node{0, Model::init(), -1, -1, 0});
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
  SearchOutcome out_;
  std::vector<std::uint32_t> ops_;  // searched op -> index in p_.ops
  std::vector<std::uint64_t> zobrist_;
  std::size_t required_ = 0;  // non-info searched ops
  std::vector<std::int32_t> next_, prev_, entry_op_, call_entry_, ret_entry_;
  std::vector<bool> is_call_;
  std::int32_t head_ = 0, tail_ = 0;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> slots_;
  std::vector<std::int32_t> mine_, theirs_;
  std::size_t charged_ = 0;
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
