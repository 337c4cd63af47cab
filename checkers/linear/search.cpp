#include "checkers/linear/search.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "checkers/linear/memo.h"

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

// What a search allocates that the next search on the same thread may reuse (cleared,
// never shrunk): the list of calls and returns and the memo's nodes and index.
template <class Model>
struct Scratch {
  std::vector<std::uint32_t> ops;  // searched op -> index in the partition, in invoke order
  std::vector<std::int32_t> next, prev, entry_op, call_entry, ret_entry, returns;
  std::vector<bool> is_call, info;
  typename Memo<Model>::Storage memo;
};

// One search over one partition. Entries of the doubly linked list are the calls and
// returns of the searched ops in time order (a call before a return at equal times, since
// times compare strictly; equal times in partition order); info ops have no return entry.
// Searched ops are numbered in invoke order, which is the rank the memo (memo.h) gives
// them in its sets.
template <class Model>
class Search {
  using State = typename Model::State;

 public:
  Search(const Partition& p, ModelKind model, SearchBudget& budget, Scratch<Model>& scratch)
      : p_(p), budget_(budget), ops_(scratch.ops), next_(scratch.next), prev_(scratch.prev),
        entry_op_(scratch.entry_op), call_entry_(scratch.call_entry), ret_entry_(scratch.ret_entry),
        is_call_(scratch.is_call), memo_(budget, scratch.info, scratch.memo) {
    std::vector<bool> keep = useful_ops(model, p);
    ops_.clear();
    for (std::uint32_t i = 0; i < p.ops.size(); ++i) {
      if (!Model::applies(p.ops[i].kind)) continue;
      ++out_.ops;
      if (keep[i]) ops_.push_back(i);
    }
    out_.searched = ops_.size();
    build_list(scratch);
  }

  SearchOutcome run() {
    auto start = std::chrono::steady_clock::now();
    out_.result = search();
    out_.memo_entries = memo_.entries();
    out_.memo_bytes = memo_.bytes_charged();
    out_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (out_.result == Result::kNotLinearizable) explain();
    return std::move(out_);
  }

 private:
  const LinOp& op(std::int32_t i) const { return p_.ops[ops_[i]]; }

  // Numbers the ops in invoke order and merges their calls (in that order) with their
  // returns (sorted apart) into the list.
  void build_list(Scratch<Model>& s) {
    sort_by_time(ops_, &LinOp::call, [&](std::uint32_t i) { return i; });
    const auto n = static_cast<std::int32_t>(ops_.size());
    s.info.assign(ops_.size(), false);
    s.returns.clear();
    for (std::int32_t i = 0; i < n; ++i) {
      s.info[i] = op(i).info;
      if (!op(i).info) s.returns.push_back(i);
    }
    required_ = s.returns.size();
    sort_by_time(s.returns, &LinOp::ret, [&](std::int32_t i) { return ops_[i]; });
    const auto entries = static_cast<std::int32_t>(ops_.size() + s.returns.size());
    head_ = entries;
    tail_ = entries + 1;
    next_.resize(static_cast<std::size_t>(entries) + 2);
    prev_.resize(next_.size());
    entry_op_.resize(static_cast<std::size_t>(entries));
    is_call_.resize(static_cast<std::size_t>(entries));
    call_entry_.assign(ops_.size(), -1);
    ret_entry_.assign(ops_.size(), -1);
    std::int32_t call = 0;
    auto ret = s.returns.begin();
    for (std::int32_t e = 0; e < entries; ++e) {
      const bool is_call = ret == s.returns.end() || (call < n && op(call).call <= op(*ret).ret);
      const std::int32_t i = is_call ? call++ : *ret++;
      entry_op_[e] = i;
      is_call_[e] = is_call;
      (is_call ? call_entry_ : ret_entry_)[i] = e;
      prev_[e] = e == 0 ? head_ : e - 1;
      next_[e] = e + 1 == entries ? tail_ : e + 1;
    }
    next_[head_] = entries == 0 ? tail_ : 0;
    prev_[tail_] = entries == 0 ? head_ : entries - 1;
  }

  // Sorts `v` by the `time` of the op at p_.ops[index(x)], then by that index (the order of
  // the partition). Partitions come in completion order, so returns are usually sorted.
  template <class T, class Index>
  void sort_by_time(std::vector<T>& v, Nanos LinOp::*time, Index index) const {
    auto before = [&](T a, T b) {
      const std::uint32_t i = index(a), j = index(b);
      return std::pair(p_.ops[i].*time, i) < std::pair(p_.ops[j].*time, j);
    };
    if (!std::is_sorted(v.begin(), v.end(), before)) std::sort(v.begin(), v.end(), before);
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

  Result over_budget() const {
    if (budget_.stop.load(std::memory_order_relaxed)) return Result::kStopped;
    if (std::chrono::steady_clock::now() > budget_.deadline) return Result::kOutOfTime;
    return Result::kLinearizable;  // meaning: within budget
  }

  // The search's position: the current node (its prefix) and state.
  struct Position {
    std::int32_t node = 0;
    State state = Model::init();
    std::size_t depth = 0;  // ops in the prefix
    std::size_t required_left = 0;
  };

  enum class Try { kPushed, kRefused, kSeen, kNoMemory };

  // Linearizes op i next, if the model allows it and the configuration is new.
  Try try_push(Position& at, std::int32_t i) {
    ++out_.steps;
    State next = at.state;
    if (!Model::step(at.state, op(i), next)) return Try::kRefused;
    std::int64_t node = memo_.visit(at.node, i, next);
    if (node == Memo<Model>::kNoMemory) return Try::kNoMemory;
    if (node == Memo<Model>::kSeen) return Try::kSeen;
    lift(i);
    at.node = static_cast<std::int32_t>(node);
    at.state = next;
    ++at.depth;
    if (!op(i).info) --at.required_left;
    if (at.depth > out_.deepest) {
      out_.deepest = at.depth;
      deepest_node_ = at.node;
      blocked_ = -1;
    }
    return Try::kPushed;
  }

  // Undoes the last push; returns its op.
  std::int32_t pop(Position& at) {
    std::int32_t top = memo_.op(at.node);
    at.node = memo_.parent(at.node);
    unlift(top);
    at.state = memo_.state(at.node);
    --at.depth;
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
    if (!memo_.start(Model::init())) return Result::kOutOfMemory;
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
        if (at.depth == out_.deepest && blocked_ < 0) blocked_ = i;
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
    for (std::int32_t n = deepest_node_; n > 0; n = memo_.parent(n)) out_.prefix.push_back(ops_[memo_.op(n)]);
    std::reverse(out_.prefix.begin(), out_.prefix.end());
    if (blocked_ >= 0) out_.blocked_op = ops_[blocked_];
    out_.state_after_prefix = Model::describe(memo_.state(deepest_node_), p_);
  }

  const Partition& p_;
  SearchBudget& budget_;
  SearchOutcome out_;
  std::vector<std::uint32_t>& ops_;  // searched op -> index in p_.ops, in invoke order
  std::size_t required_ = 0;  // non-info searched ops
  std::vector<std::int32_t>&next_, &prev_, &entry_op_, &call_entry_, &ret_entry_;
  std::vector<bool>& is_call_;
  std::int32_t head_ = 0, tail_ = 0;
  Memo<Model> memo_;
  std::int32_t deepest_node_ = 0;
  std::int32_t blocked_ = -1;
};

// PartitionSearcher's model-specific half: the scratch a search of that model leaves behind.
struct SearcherBase {
  virtual ~SearcherBase() = default;
  virtual SearchOutcome search(const Partition& p) = 0;
};

template <class Model>
struct Searcher : SearcherBase {
  Searcher(ModelKind model, SearchBudget& budget) : model(model), budget(budget) {}
  SearchOutcome search(const Partition& p) override { return Search<Model>(p, model, budget, scratch).run(); }
  ModelKind model;
  SearchBudget& budget;
  Scratch<Model> scratch;
};

std::unique_ptr<SearcherBase> make_searcher(ModelKind model, SearchBudget& budget) {
  switch (model) {
    case ModelKind::kMutex: return std::make_unique<Searcher<MutexModel>>(model, budget);
    case ModelKind::kFencedMutex: return std::make_unique<Searcher<FencedMutexModel>>(model, budget);
    case ModelKind::kRegister: return std::make_unique<Searcher<RegisterModel>>(model, budget);
    case ModelKind::kCasRegister: return std::make_unique<Searcher<CasRegisterModel>>(model, budget);
  }
  return nullptr;
}

}  // namespace

struct PartitionSearcher::Impl {
  std::unique_ptr<SearcherBase> searcher;
};

PartitionSearcher::PartitionSearcher(ModelKind model, SearchBudget& budget)
    : impl_(std::make_unique<Impl>(Impl{make_searcher(model, budget)})) {}
PartitionSearcher::~PartitionSearcher() = default;

SearchOutcome PartitionSearcher::search(const Partition& partition) {
  return impl_->searcher ? impl_->searcher->search(partition) : SearchOutcome{};
}

SearchOutcome search_partition(ModelKind model, const Partition& partition, SearchBudget& budget) {
  return PartitionSearcher(model, budget).search(partition);
}

}  // namespace fencecheck::linear
