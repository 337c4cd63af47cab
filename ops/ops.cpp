#include "ops/ops.h"

#include <atomic>
#include <mutex>
#include <stdexcept>

namespace fencecheck {
namespace {

// Ops added by declare_op. A row is written completely before `count` publishes it, and
// never changes after; readers load `count` first, so they never see a partial row.
struct DeclaredOps {
  std::mutex mu;  // serializes declare_op
  std::array<std::string, kMaxDeclaredOps> names;
  std::array<OpSpec, kMaxDeclaredOps> specs;
  std::atomic<std::size_t> count{0};
};

DeclaredOps& declared() {
  static DeclaredOps d;
  return d;
}

const OpSpec* spec_at(std::size_t index) {
  if (index < kBuiltinOps.size()) return &kBuiltinOps[index];
  DeclaredOps& d = declared();
  std::size_t i = index - kBuiltinOps.size();
  return i < d.count.load(std::memory_order_acquire) ? &d.specs[i] : nullptr;
}

std::size_t op_count() { return kBuiltinOps.size() + declared().count.load(std::memory_order_acquire); }

}  // namespace

std::string_view to_string(OpType t) {
  switch (t) {
    case OpType::kInvoke: return "invoke";
    case OpType::kOk: return "ok";
    case OpType::kFail: return "fail";
    case OpType::kInfo: return "info";
    case OpType::kNotice: return "notice";
  }
  return "?";
}

std::optional<OpType> parse_op_type(std::string_view s) {
  for (OpType t : {OpType::kInvoke, OpType::kOk, OpType::kFail, OpType::kInfo, OpType::kNotice}) {
    if (s == to_string(t)) return t;
  }
  return std::nullopt;
}

std::string_view to_string(ValueShape s) {
  switch (s) {
    case ValueShape::kNull: return "null";
    case ValueShape::kAny: return "any JSON value";
    case ValueShape::kToken: return "{\"token\": N|null}";
    case ValueShape::kTokenAndValue: return "{\"token\": N|null, \"value\": X}";
    case ValueShape::kExpectAndValue: return "{\"expect\": X, \"value\": Y}";
  }
  return "?";
}

const OpSpec& op_spec(OpFn f) {
  if (const OpSpec* spec = f == OpFn::kNemesis ? nullptr : spec_at(static_cast<std::size_t>(f))) return *spec;
  throw std::invalid_argument("op_spec: " + std::string(to_string(f)) + " is not a client op");
}

std::optional<OpFn> find_op(std::string_view name) {
  for (std::size_t i = 0, n = op_count(); i < n; ++i) {
    if (spec_at(i)->name == name) return static_cast<OpFn>(i);
  }
  return std::nullopt;
}

std::vector<OpFn> client_ops() {
  std::vector<OpFn> ops;
  for (std::size_t i = 0, n = op_count(); i < n; ++i) ops.push_back(static_cast<OpFn>(i));
  return ops;
}

std::string op_names(bool notices) {
  std::string s;
  for (OpFn f : client_ops()) {
    if (!notices && op_spec(f).notice) continue;
    if (!s.empty()) s += ", ";
    s += to_string(f);
  }
  return s;
}

std::string notice_names() {
  std::string s;
  for (OpFn f : client_ops()) {
    if (!op_spec(f).notice) continue;
    if (!s.empty()) s += ", ";
    s += to_string(f);
  }
  return s;
}

std::string_view to_string(OpFn f) {
  if (f == OpFn::kNemesis) return "nemesis";
  const OpSpec* spec = spec_at(static_cast<std::size_t>(f));
  return spec ? spec->name : "?";
}

OpFn declare_op(const OpSpec& spec) {
  std::string_view problem = declaration_problem(spec);
  if (!problem.empty()) throw std::invalid_argument("op \"" + std::string(spec.name) + "\": " + std::string(problem));
  DeclaredOps& d = declared();
  std::lock_guard<std::mutex> lock(d.mu);
  if (find_op(spec.name)) throw std::invalid_argument("op \"" + std::string(spec.name) + "\" is already declared");
  std::size_t i = d.count.load(std::memory_order_relaxed);
  if (i == kMaxDeclaredOps) throw std::invalid_argument("no room for op \"" + std::string(spec.name) + "\": the vocabulary is full");
  d.names[i] = std::string(spec.name);
  d.specs[i] = spec;
  d.specs[i].name = d.names[i];
  d.count.store(i + 1, std::memory_order_release);
  return static_cast<OpFn>(kBuiltinOps.size() + i);
}

nlohmann::json completion_value(OpFn f, OpType completion_type, const nlohmann::json& invoke_value,
                                const nlohmann::json& ok_value) {
  if (op_spec(f).repeats_invoke_value) return invoke_value;
  return completion_type == OpType::kOk ? ok_value : nlohmann::json();
}

}  // namespace fencecheck
