// The history model: one Event per line of history.jsonl (docs/history.md). The op
// vocabulary it is written in (OpType, OpFn, Token, Nanos) is ops/ops.h.
//
// Events are plain values, cheap to copy and safe to share between threads once built.
// `value` keeps the line's `value` field as canonical JSON text (canonical_json.h) so that
// no information is lost and equal values compare equal as strings; the fields the
// checkers need (token, the element a write adds, the elements a read returned) are
// decoded once by the reader and stored next to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/ops.h"

namespace fencecheck {

inline constexpr std::int64_t kNemesisProcess = -1;

struct Event {
  std::uint64_t index = 0;
  Nanos time = 0;
  std::int64_t process = kNemesisProcess;  // kNemesisProcess for nemesis lines
  OpType type = OpType::kInvoke;
  OpFn f = OpFn::kNemesis;
  std::string f_name;  // as written: "acquire", or the fault name for the nemesis
  std::string key;     // empty for nemesis lines
  std::string value;   // canonical JSON text of `value` ("null" when absent)
  std::string node;    // optional `node`, empty when absent
  std::string error;   // optional `error`, empty when absent
  std::size_t line = 0;  // 1-based line number in the file it came from

  // Decoded from `value` by the reader, as the op's declaration says (ops/ops.h, OpDecodes):
  std::optional<Token> token;  // acquire ok / release / write: {"token": N}
  // write: the element the write adds (last item of value.value when it is an array),
  // canonical JSON; empty when the write adds none.
  std::string appended;
  // read ok: when the value read is an array, its items as canonical JSON.
  bool read_is_array = false;
  std::vector<std::string> read_items;
  // acquire ok and `renewed`: what the lock promised (docs/history.md). `promised` is false
  // when the value does not say (valid_ms absent: an older history, a client that cannot
  // tell); valid_ms nullopt with `promised` means no time promise, and `bound` says what
  // the lock lives by instead ("session", "connection"; may be empty).
  bool promised = false;
  std::optional<std::int64_t> valid_ms;
  std::string bound;

  bool is_nemesis() const { return process == kNemesisProcess; }
  bool is_client() const { return !is_nemesis(); }
  bool is_completion() const { return type != OpType::kInvoke && type != OpType::kNotice; }
  bool is_notice() const { return type == OpType::kNotice; }
};

// Formats a time in nanoseconds as seconds with millisecond precision, e.g. "1.204 s".
std::string format_seconds(Nanos t);
// "process 3 (c3)" or "process 3" when the node is unknown.
std::string describe_process(std::int64_t process, std::string_view node);

}  // namespace fencecheck
