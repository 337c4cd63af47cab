// The client ops of a history, in one table: each op's name, the shape of its `value` in
// each phase, and whether its completions repeat the invoke's value (DESIGN.md, "History
// format"). The JSONL reader validates and decodes values by this table; the controller
// and the worker take the repeat rule from completion_value() — so adding an op is one row
// in ops.cpp (plus its OpFn enumerator in history.h).
//
// The table is immutable: every function here is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "checkers/history.h"

namespace fencecheck {

// What a `value` must look like. Absent counts as null; every other mismatch is bad input.
enum class ValueShape : std::uint8_t {
  kNull,            // null
  kAny,             // any JSON value
  kToken,           // {"token": N|null}
  kTokenAndValue,   // {"token": N|null, "value": X}
  kExpectAndValue,  // {"expect": X, "value": Y}
};
std::string_view to_string(ValueShape s);  // e.g. "{\"token\": N|null}"

struct OpSpec {
  std::string_view name;  // as written in `f`
  OpFn fn;
  // The value of every completion (ok, fail, info) is the invoke's value, whatever the
  // outcome; otherwise an ok completion carries `ok` and fail / info carry null.
  bool repeats_invoke_value;
  ValueShape invoke;  // value of the invoke
  ValueShape ok;      // value of an ok completion
  // Decoding for the checkers (history.h, Event): the last item of value.value is the
  // element the op appends (lock-append writes); an ok value that is an array is the
  // list read.
  bool appends;
  bool reads;

  // The shape of the value of a `type` event of this op.
  ValueShape shape(OpType type) const;
};

// The row of a client op. `f` must not be OpFn::kNemesis (std::invalid_argument).
const OpSpec& op_spec(OpFn f);
// The row named `name`; nullptr when no client op has that name.
const OpSpec* find_op(std::string_view name);
// "acquire, release, read, write, cas" for error messages.
std::string op_names();

// The value a completion of `f` records: for ops that repeat their invoke value it is
// `invoke_value` whatever the outcome; otherwise `ok_value` when `completion_type` is ok
// and null on fail or info.
nlohmann::json completion_value(OpFn f, OpType completion_type, const nlohmann::json& invoke_value,
                                const nlohmann::json& ok_value);

}  // namespace fencecheck
