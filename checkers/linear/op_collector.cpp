#include "checkers/linear/op_collector.h"

#include <unordered_map>

#include <simdjson.h>

#include "checkers/canonical_json.h"

namespace fencecheck::linear {

namespace {

std::optional<OpKind> kind_of(OpFn f) {
  switch (f) {
    case OpFn::kAcquire: return OpKind::kAcquire;
    case OpFn::kRelease: return OpKind::kRelease;
    case OpFn::kRead: return OpKind::kRead;
    case OpFn::kWrite: return OpKind::kWrite;
    case OpFn::kCas: return OpKind::kCas;
    case OpFn::kNemesis:
    case OpFn::kLost:
    case OpFn::kRenewed: return std::nullopt;  // a notice is no op of the lock (docs/checkers.md)
  }
  return std::nullopt;
}

}  // namespace

// A lock op's events cost a few hash lookups and no allocation once its key and process
// have been seen: entries of processes and holders stay in their maps (marked idle or
// emptied) until the process is retired.
struct OpCollector::Impl {
  struct Pending {
    LinOp op;
    std::uint32_t key;
    bool active = false;  // an op of the process is in flight
  };
  std::unordered_map<std::string, std::uint32_t> key_ids;
  std::vector<Partition> partitions;
  std::vector<std::unordered_map<std::string, std::int64_t>> value_ids;  // per partition
  std::unordered_map<std::int64_t, Pending> in_flight;                  // by process
  struct Held {
    std::uint32_t key;
    std::int64_t token;
  };
  // By process: the locks it holds (an ok acquire its next release has not yet invoked);
  // possibly empty.
  std::unordered_map<std::int64_t, std::vector<Held>> held;
  simdjson::dom::parser parser;  // the collector's own, so its memory ends with the collector

  // The canonical JSON of `text` (canonical_json.h: 1.0 and 1, or key order, do not make
  // two values differ), or of its field `field` when `field` is given and `text` is an
  // object (null when it lacks the field); `text` itself when it is not JSON.
  std::string canonical(const std::string& text, const char* field = nullptr) {
    simdjson::dom::element e;
    if (parser.parse(text).get(e)) return text;
    simdjson::dom::object o;
    if (field != nullptr && !e.get_object().get(o)) {
      simdjson::dom::element member;
      return o.at_key(field).get(member) ? "null" : canonical_json(member);
    }
    return canonical_json(e);
  }

  std::uint32_t key_id(const std::string& key) {
    if (auto it = key_ids.find(key); it != key_ids.end()) return it->second;
    auto id = static_cast<std::uint32_t>(partitions.size());
    key_ids.emplace(key, id);
    partitions.push_back(Partition{key, {}, {"null"}});
    value_ids.push_back({{"null", kNullValue}});
    return id;
  }

  void stop_holding(std::int64_t process, std::uint32_t key) {
    auto it = held.find(process);
    if (it != held.end()) std::erase_if(it->second, [&](const Held& h) { return h.key == key; });
  }

  // `retiring` (a completed op of unknown outcome) retired its process: every lock it held
  // is given back some time after that op's invoke, or never. Returns how many.
  std::uint64_t retire(const LinOp& retiring, std::uint64_t complete_index) {
    auto it = held.find(retiring.process);
    if (it == held.end()) return 0;
    std::uint64_t n = 0;
    for (const Held& h : it->second) {
      LinOp release;
      release.kind = OpKind::kRelease;
      release.call = retiring.call;
      release.ret = kNever;
      release.info = true;
      release.implied = true;
      release.process = retiring.process;
      release.arg = h.token;
      release.invoke_index = retiring.invoke_index;
      release.complete_index = complete_index;
      partitions[h.key].ops.push_back(release);
      ++n;
    }
    held.erase(it);
    return n;
  }

  std::int64_t value_id(std::uint32_t key, std::string canonical) {
    auto& ids = value_ids[key];
    auto [it, fresh] = ids.emplace(canonical, static_cast<std::int64_t>(ids.size()));
    if (fresh) partitions[key].values.push_back(std::move(canonical));
    return it->second;
  }
};

OpCollector::OpCollector() : impl_(std::make_unique<Impl>()) {}
OpCollector::~OpCollector() = default;

void OpCollector::observe(const Event& e) {
  if (e.is_nemesis()) return;
  auto kind = kind_of(e.f);
  if (!kind) return;
  Impl& s = *impl_;
  if (e.type == OpType::kInvoke) {
    Impl::Pending p{LinOp{}, s.key_id(e.key)};
    p.op.call = e.time;
    p.op.process = e.process;
    p.op.invoke_index = p.op.complete_index = e.index;
    p.op.kind = *kind;
    if (*kind == OpKind::kRelease && e.token) p.op.arg = *e.token;
    if (*kind == OpKind::kWrite) p.op.arg = s.value_id(p.key, s.canonical(e.value, "value"));
    if (*kind == OpKind::kCas) {
      p.op.arg = s.value_id(p.key, s.canonical(e.value, "expect"));
      p.op.arg2 = s.value_id(p.key, s.canonical(e.value, "value"));
    }
    if (*kind == OpKind::kRelease) s.stop_holding(e.process, p.key);
    p.active = true;
    s.in_flight[e.process] = p;
    return;
  }
  auto it = s.in_flight.find(e.process);
  if (it == s.in_flight.end() || !it->second.active) return;  // the validator rejects this; stay harmless
  Impl::Pending p = it->second;
  if (e.type == OpType::kInfo) {  // the process is retired: its entries go
    s.in_flight.erase(it);
    counts_.implied_releases += s.retire(p.op, e.index);
  } else {
    it->second.active = false;
  }
  if (e.type == OpType::kFail) {
    ++counts_.fail_dropped;
    return;
  }
  if (e.type == OpType::kInfo && !op_spec(e.f).changes_state) {  // a read: as if it never happened
    ++counts_.info_reads_dropped;
    return;
  }
  p.op.complete_index = e.index;
  p.op.info = e.type == OpType::kInfo;
  p.op.ret = p.op.info ? kNever : e.time;
  if (!p.op.info && *kind == OpKind::kAcquire && e.token) {
    p.op.arg = *e.token;
    counts_.tokens = true;
  }
  if (!p.op.info && *kind == OpKind::kAcquire) s.held[e.process].push_back({p.key, p.op.arg});
  if (!p.op.info && *kind == OpKind::kRead) p.op.arg = s.value_id(p.key, s.canonical(e.value));
  counts_.lock_ops |= p.op.is_lock_op();
  counts_.register_ops |= *kind == OpKind::kRead || *kind == OpKind::kWrite;
  counts_.cas_ops |= *kind == OpKind::kCas;
  s.partitions[p.key].ops.push_back(p.op);
}

std::vector<Partition> OpCollector::take_partitions() {
  Impl& s = *impl_;
  for (auto& [process, p] : s.in_flight) {
    if (!p.active || !op_spec(p.op.kind).changes_state) continue;  // a read cut short: as if it never happened
    p.op.info = true;
    p.op.ret = kNever;
    ++counts_.cut_short;
    counts_.lock_ops |= p.op.is_lock_op();
    counts_.register_ops |= p.op.kind == OpKind::kWrite;
    counts_.cas_ops |= p.op.kind == OpKind::kCas;
    s.partitions[p.key].ops.push_back(p.op);
  }
  std::vector<Partition> out = std::move(s.partitions);
  impl_ = std::make_unique<Impl>();
  return out;
}

}  // namespace fencecheck::linear
