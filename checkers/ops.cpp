#include "checkers/ops.h"

#include <array>
#include <stdexcept>

namespace fencecheck {
namespace {

using S = ValueShape;

// One row per client op. Order is the order op_names() lists them in.
constexpr std::array<OpSpec, 5> kOps = {{
    // name       fn              repeats invoke              ok                  appends reads
    {"acquire", OpFn::kAcquire, false, S::kNull, S::kToken, false, false},
    {"release", OpFn::kRelease, true, S::kToken, S::kToken, false, false},
    {"read", OpFn::kRead, false, S::kNull, S::kAny, false, true},
    {"write", OpFn::kWrite, true, S::kTokenAndValue, S::kTokenAndValue, true, false},
    {"cas", OpFn::kCas, true, S::kExpectAndValue, S::kExpectAndValue, false, false},
}};

}  // namespace

std::string_view to_string(ValueShape s) {
  switch (s) {
    case S::kNull: return "null";
    case S::kAny: return "any JSON value";
    case S::kToken: return "{\"token\": N|null}";
    case S::kTokenAndValue: return "{\"token\": N|null, \"value\": X}";
    case S::kExpectAndValue: return "{\"expect\": X, \"value\": Y}";
  }
  return "?";
}

ValueShape OpSpec::shape(OpType type) const {
  if (type == OpType::kInvoke || repeats_invoke_value) return invoke;
  return type == OpType::kOk ? ok : S::kNull;
}

const OpSpec& op_spec(OpFn f) {
  for (const OpSpec& op : kOps) {
    if (op.fn == f) return op;
  }
  throw std::invalid_argument("op_spec: " + std::string(to_string(f)) + " is not a client op");
}

const OpSpec* find_op(std::string_view name) {
  for (const OpSpec& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::string op_names() {
  std::string s;
  for (const OpSpec& op : kOps) {
    if (!s.empty()) s += ", ";
    s += op.name;
  }
  return s;
}

nlohmann::json completion_value(OpFn f, OpType completion_type, const nlohmann::json& invoke_value,
                                const nlohmann::json& ok_value) {
  if (op_spec(f).repeats_invoke_value) return invoke_value;
  return completion_type == OpType::kOk ? ok_value : nlohmann::json();
}

}  // namespace fencecheck
