#include "checkers/linear/explain.h"

#include <algorithm>

#include "checkers/bounded.h"

namespace fencecheck::linear {

namespace {

constexpr std::size_t kPrefixTail = 8;
constexpr std::size_t kMaxConcurrent = 16;

nlohmann::json value_json(const Partition& p, std::int64_t id) {
  return bounded_json(p.values.at(static_cast<std::size_t>(id)));
}

bool overlaps(const LinOp& a, const LinOp& b) { return a.call < b.ret && b.call < a.ret; }

}  // namespace

nlohmann::json op_to_json(const LinOp& op, const Partition& p) {
  nlohmann::json j = {{"f", to_string(op.kind)},
                      {"process", op.process},
                      {"type", op.info ? "info" : "ok"},
                      {"invoke_index", op.invoke_index},
                      {"complete_index", op.complete_index},
                      {"invoke_time", op.call},
                      {"complete_time", op.info ? nlohmann::json() : nlohmann::json(op.ret)}};
  if (op.implied) j["implied_by_retirement"] = true;  // no line records it: the indices are the retiring op's
  switch (op.kind) {
    case OpKind::kAcquire:
    case OpKind::kRelease:
      j["token"] = op.arg == kNoToken ? nlohmann::json() : nlohmann::json(op.arg);
      break;
    case OpKind::kRead:
    case OpKind::kWrite: j["value"] = value_json(p, op.arg); break;
    case OpKind::kCas:
      j["value"] = {{"expect", value_json(p, op.arg)}, {"value", value_json(p, op.arg2)}};
      break;
    case OpKind::kNemesis:
    case OpKind::kLost:
    case OpKind::kRenewed: break;  // never in a partition (notices are not ops of the lock)
  }
  j["description"] = describe_op(op, p);
  return j;
}

nlohmann::json violation_to_json(const Partition& p, const SearchOutcome& out, ModelKind m) {
  nlohmann::json v = {{"key", p.key}, {"model", to_string(m)}};
  v["reason"] = violation_sentence(p, out, m);
  v["prefix_length"] = out.prefix.size();
  v["state_after_prefix"] = out.state_after_prefix;
  nlohmann::json tail = nlohmann::json::array();
  std::size_t from = out.prefix.size() > kPrefixTail ? out.prefix.size() - kPrefixTail : 0;
  for (std::size_t i = from; i < out.prefix.size(); ++i) tail.push_back(op_to_json(p.ops[out.prefix[i]], p));
  v["prefix_tail"] = std::move(tail);
  if (out.blocked_op < 0) return v;
  const LinOp& blocked = p.ops[static_cast<std::size_t>(out.blocked_op)];
  v["op"] = op_to_json(blocked, p);
  std::vector<std::uint32_t> in_prefix(out.prefix);
  std::sort(in_prefix.begin(), in_prefix.end());
  nlohmann::json concurrent = nlohmann::json::array();
  std::size_t count = 0;
  for (std::uint32_t i = 0; i < p.ops.size(); ++i) {
    const LinOp& op = p.ops[i];
    if (i == static_cast<std::uint32_t>(out.blocked_op) || !model_applies(m, op.kind) ||
        !overlaps(op, blocked)) {
      continue;
    }
    if (++count > kMaxConcurrent) continue;
    nlohmann::json j = op_to_json(op, p);
    j["in_prefix"] = std::binary_search(in_prefix.begin(), in_prefix.end(), i);
    concurrent.push_back(std::move(j));
  }
  v["concurrent"] = std::move(concurrent);
  v["concurrent_count"] = count;
  return v;
}

std::string violation_sentence(const Partition& p, const SearchOutcome& out, ModelKind m) {
  std::string s = "Key \"" + p.key + "\" is not linearizable as a " + std::string(to_string(m)) + ": ";
  if (out.blocked_op < 0) return s + "no op could be linearized.";
  const LinOp& blocked = p.ops[static_cast<std::size_t>(out.blocked_op)];
  std::size_t concurrent = 0;
  for (const LinOp& op : p.ops) {
    if (&op != &blocked && model_applies(m, op.kind) && overlaps(op, blocked)) ++concurrent;
  }
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on `" " + std::string`.
  s += "the " + describe_op(blocked, p) + " cannot take effect after the longest linearizable prefix of ";
  s += std::to_string(out.prefix.size());
  s += out.prefix.size() == 1 ? " op" : " ops";
  if (!out.prefix.empty()) {
    const LinOp& last = p.ops[out.prefix.back()];
    s += " (ending with the " + std::string(to_string(last.kind)) + " by process " + std::to_string(last.process);
    s += " at index " + std::to_string(last.invoke_index) + ")";
  }
  s += ", when " + out.state_after_prefix + "; ";
  s += concurrent == 0 ? std::string("no") : std::to_string(concurrent);
  s += concurrent <= 1 ? " other op was" : " other ops were";
  s += " concurrent with it.";
  return s;
}

}  // namespace fencecheck::linear
