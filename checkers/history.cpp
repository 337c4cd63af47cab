#include "checkers/history.h"

#include <cstdio>

#include "checkers/event_source.h"

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
  switch (f) {
    case OpFn::kAcquire: return "acquire";
    case OpFn::kRelease: return "release";
    case OpFn::kRead: return "read";
    case OpFn::kWrite: return "write";
    case OpFn::kCas: return "cas";
    case OpFn::kNemesis: return "nemesis";
  }
  return "?";
}

std::optional<OpType> parse_op_type(std::string_view s) {
  if (s == "invoke") return OpType::kInvoke;
  if (s == "ok") return OpType::kOk;
  if (s == "fail") return OpType::kFail;
  if (s == "info") return OpType::kInfo;
  return std::nullopt;
}

std::optional<OpFn> parse_client_fn(std::string_view s) {
  if (s == "acquire") return OpFn::kAcquire;
  if (s == "release") return OpFn::kRelease;
  if (s == "read") return OpFn::kRead;
  if (s == "write") return OpFn::kWrite;
  if (s == "cas") return OpFn::kCas;
  return std::nullopt;
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
