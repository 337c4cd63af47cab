// The op vocabulary: every client op a history may hold, each declared ONCE as a row of
// kBuiltinOps (or, at run time, with declare_op): its name as written in the history's `f`,
// where it runs, whether it changes state, the shape of its `value` in each phase, whether
// its completions repeat the invoke's value, and what the checkers decode from it (the
// history format: docs/history.md). Everything else follows from the row: the JSONL and EDN
// readers validate and decode values by it, the control plane's codec (harness/control)
// encodes ops by it, the report names ops by it, and the checkers that judge a workload
// follow from its ops (checkers/registry.h).
//
// An op is named in code by OpFn, a one-byte index into the vocabulary. The enumerators are
// computed from the rows by name (a missing row does not compile), so they cannot disagree
// with the table; they exist so that code which treats one op specially can `switch` on it
// and so that Event and the linearizability engine's records stay small. A new op is one row
// (plus an enumerator only if code names it); declare_op adds one at run time (tests).
//
// Thread safety: the built-in rows are immutable; declare_op may run concurrently with every
// other function here (a declared row is published once complete and never changes). Every
// call returns at once. Errors: std::invalid_argument, saying what is wrong.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

using Token = std::int64_t;  // a fencing token
using Nanos = std::int64_t;  // nanoseconds since the start of a run

// kNotice: a line that is neither invoke nor completion, from an op declared `notice`
// (the lock library telling its process something, e.g. `lost`).
enum class OpType : std::uint8_t { kInvoke, kOk, kFail, kInfo, kNotice };
std::string_view to_string(OpType t);
std::optional<OpType> parse_op_type(std::string_view s);

// What a `value` must look like. Absent counts as null; every other mismatch is bad input.
enum class ValueShape : std::uint8_t {
  kNull,            // null
  kAny,             // any JSON value
  kToken,           // {"token": N|null}
  kTokenAndValue,   // {"token": N|null, "value": X}
  kExpectAndValue,  // {"expect": X, "value": Y} (a "token" beside them is allowed, not read)
};
std::string_view to_string(ValueShape s);  // e.g. "{\"token\": N|null}"
constexpr bool has_token(ValueShape s) { return s == ValueShape::kToken || s == ValueShape::kTokenAndValue; }
constexpr bool has_value_member(ValueShape s) {
  return s == ValueShape::kTokenAndValue || s == ValueShape::kExpectAndValue;
}

// Where an op runs: on the lock service under test, or on the fenced resource (whose log,
// resource.jsonl, records it).
enum class OpPlace : std::uint8_t { kLockService, kResource };

// What the readers decode from an op's value for the checkers (checkers/history.h, Event).
struct OpDecodes {
  bool token = false;       // value.token (or value.token of the ok) → Event::token
  bool appended = false;    // the last item of value.value, when an array → Event::appended
  bool read_items = false;  // an ok value that is an array → Event::read_items
  // value.valid_ms (an integer, or null for no time promise) and value.bound → Event::promise;
  // an op that is a notice must carry an integer valid_ms.
  bool promise = false;
};

// One op's declaration.
struct OpSpec {
  std::string_view name;  // as written in `f`
  OpPlace runs_at = OpPlace::kLockService;
  bool changes_state = true;  // false: a read, which may be dropped when its outcome is unknown
  ValueShape invoke = ValueShape::kNull;  // value of the invoke
  ValueShape ok = ValueShape::kNull;      // value of an ok completion
  // The value of every completion (ok, fail, info) is the invoke's value, whatever the
  // outcome; otherwise an ok completion carries `ok` and fail / info carry null.
  bool repeats_invoke_value = false;
  OpDecodes decodes;
  // A notice, never invoked: its lines have type notice (and no other op's may), with an
  // `invoke`-shaped value.
  bool notice = false;

  // The shape of the value of a `type` event of this op.
  constexpr ValueShape shape(OpType type) const {
    if (type == OpType::kInvoke || type == OpType::kNotice || repeats_invoke_value) return invoke;
    return type == OpType::kOk ? ok : ValueShape::kNull;
  }
};

// Why a declaration is inconsistent (a decoded field its shapes do not carry, a repeating
// op whose ok shape differs from its invoke shape, no name); empty when it is sound.
constexpr std::string_view declaration_problem(const OpSpec& op) {
  if (op.name.empty() || op.name == "nemesis") return "an op needs a name other than \"nemesis\"";
  if (op.repeats_invoke_value && op.ok != op.invoke) return "its completions repeat the invoke value, so ok must be the invoke shape";
  if (op.decodes.token && !has_token(op.invoke) && !has_token(op.ok)) return "it decodes a token its value never carries";
  if (op.decodes.appended && !has_value_member(op.invoke)) return "it decodes an appended element but its invoke has no \"value\"";
  if (op.decodes.read_items && (op.ok != ValueShape::kAny || op.repeats_invoke_value)) return "it decodes items read but its ok value is not the value read";
  if (op.notice && (op.ok != ValueShape::kNull || op.repeats_invoke_value || op.changes_state)) return "a notice has no completions and changes nothing";
  return {};
}

// The built-in ops, one row each. Row order is the order op_names() lists them in and the
// order of OpFn's values.
inline constexpr std::array kBuiltinOps = {
    OpSpec{.name = "acquire", .runs_at = OpPlace::kLockService, .changes_state = true,
           .invoke = ValueShape::kNull, .ok = ValueShape::kToken, .repeats_invoke_value = false,
           .decodes = {.token = true, .promise = true}},
    OpSpec{.name = "release", .runs_at = OpPlace::kLockService, .changes_state = true,
           .invoke = ValueShape::kToken, .ok = ValueShape::kToken, .repeats_invoke_value = true,
           .decodes = {.token = true}},
    OpSpec{.name = "read", .runs_at = OpPlace::kResource, .changes_state = false,
           .invoke = ValueShape::kNull, .ok = ValueShape::kAny, .repeats_invoke_value = false,
           .decodes = {.read_items = true}},
    OpSpec{.name = "write", .runs_at = OpPlace::kResource, .changes_state = true,
           .invoke = ValueShape::kTokenAndValue, .ok = ValueShape::kTokenAndValue,
           .repeats_invoke_value = true, .decodes = {.token = true, .appended = true}},
    OpSpec{.name = "cas", .runs_at = OpPlace::kResource, .changes_state = true,
           .invoke = ValueShape::kExpectAndValue, .ok = ValueShape::kExpectAndValue,
           .repeats_invoke_value = true, .decodes = {}},
    // The lock library told its process that it lost the lock `key` (docs/history.md).
    OpSpec{.name = "lost", .runs_at = OpPlace::kLockService, .changes_state = false,
           .invoke = ValueShape::kAny, .ok = ValueShape::kNull, .repeats_invoke_value = false,
           .decodes = {}, .notice = true},
    // The client renewed its grant of `key` on its own: {"valid_ms": N}, the new promise.
    OpSpec{.name = "renewed", .runs_at = OpPlace::kLockService, .changes_state = false,
           .invoke = ValueShape::kAny, .ok = ValueShape::kNull, .repeats_invoke_value = false,
           .decodes = {.promise = true}, .notice = true},
};
static_assert([] {
  for (const OpSpec& op : kBuiltinOps) {
    if (!declaration_problem(op).empty()) return false;
  }
  return true;
}(), "a row of kBuiltinOps is inconsistent: see declaration_problem()");

// The index of the built-in row named `name`; not a constant expression (so a compile
// error where it names an enumerator) when there is none.
consteval std::uint8_t builtin_op_index(std::string_view name) {
  for (std::size_t i = 0; i < kBuiltinOps.size(); ++i) {
    if (kBuiltinOps[i].name == name) return static_cast<std::uint8_t>(i);
  }
  throw "no row of kBuiltinOps has this name";
}

// An op, by its index in the vocabulary: built-in rows first, then declared ops. Values
// other than the enumerators are valid (declared ops). kNemesis marks nemesis lines.
enum class OpFn : std::uint8_t {
  kAcquire = builtin_op_index("acquire"),
  kRelease = builtin_op_index("release"),
  kRead = builtin_op_index("read"),
  kWrite = builtin_op_index("write"),
  kCas = builtin_op_index("cas"),
  kLost = builtin_op_index("lost"),
  kRenewed = builtin_op_index("renewed"),
  kNemesis = 0xFF,
};

// The row of a client op. std::invalid_argument for OpFn::kNemesis or an index no op has.
const OpSpec& op_spec(OpFn f);
// The client op named `name`; nullopt when no op has that name ("nemesis" included).
std::optional<OpFn> find_op(std::string_view name);
// Every client op, built-in then declared, in index order.
std::vector<OpFn> client_ops();
// "acquire, release, read, write, cas, lost, renewed" for error messages; without the
// notices ("lost", "renewed") when notices is false.
std::string op_names(bool notices = true);
// The ops declared `notice` ("lost", "renewed"), for error messages.
std::string notice_names();
// The op's name; "nemesis" for OpFn::kNemesis, "?" for an index no op has.
std::string_view to_string(OpFn f);

// Adds an op to the vocabulary for the rest of the process (the name is copied) and returns
// it. std::invalid_argument when the declaration is inconsistent (declaration_problem), its
// name is taken, or the vocabulary is full (kMaxDeclaredOps).
inline constexpr std::size_t kMaxDeclaredOps = 32;
OpFn declare_op(const OpSpec& spec);

// The value a completion of `f` records: for ops that repeat their invoke value it is
// `invoke_value` whatever the outcome; otherwise `ok_value` when `completion_type` is ok
// and null on fail or info.
nlohmann::json completion_value(OpFn f, OpType completion_type, const nlohmann::json& invoke_value,
                                const nlohmann::json& ok_value);

}  // namespace fencecheck
