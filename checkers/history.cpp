#include "checkers/history.h"

#include <cstdio>

#include "checkers/event_source.h"
#include "checkers/ops.h"

namespace fencecheck {

std::string_view to_string(OpType t) {
  switch (t) {
    case OpType::kInvoke: return "invoke";
    case OpType::kOk: return "ok";
    case OpType::kFail: return "fail";
    case OpType::kInfo: return "info";
  }
  return "?";
}

std::string_view to_string(OpFn f) {
  return f == OpFn::kNemesis ? std::string_view("nemesis") : op_spec(f).name;
}

std::optional<OpType> parse_op_type(std::string_view s) {
  if (s == "invoke") return OpType::kInvoke;
  if (s == "ok") return OpType::kOk;
  if (s == "fail") return OpType::kFail;
  if (s == "info") return OpType::kInfo;
  return std::nullopt;
}

std::optional<OpFn> parse_client_fn(std::string_view s) {
  const OpSpec* op = find_op(s);
  if (op == nullptr) return std::nullopt;
  return op->fn;
}

std::string format_seconds(Nanos t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(t) / 1e9);
  return buf;
}

std::string describe_process(std::int64_t process, std::string_view node) {
  std::string s = "process " + std::to_string(process);
  if (!node.empty()) {
    s += " (";
    s += node;
    s += ")";
  }
  return s;
}

}  // namespace fencecheck
