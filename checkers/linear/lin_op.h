// The compact form of one completed client operation, as the linearizability engine sees
// it, and the per-key partition that groups them (P-compositionality: each key is its own
// object, so each partition is checked alone).
//
// A LinOp is a plain 64-byte value. Register values are interned per partition to small
// ids (id 0 is always JSON `null`, the value of a never-written register), so models
// compare integers, never text. Partitions are immutable once built and may be read from
// several threads.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/linear/pod_vector.h"

namespace fencecheck::linear {

// The client ops of ops/ops.h; kNemesis never reaches a partition.
using OpKind = OpFn;

// The return time of an `info` op: it may take effect at any time after its invoke.
inline constexpr Nanos kNever = std::numeric_limits<Nanos>::max();
// No token (null or unknown).
inline constexpr std::int64_t kNoToken = std::numeric_limits<std::int64_t>::min();
// The interned id of JSON null.
inline constexpr std::int64_t kNullValue = 0;

struct LinOp {
  Nanos call = 0;
  Nanos ret = kNever;  // kNever for info ops
  std::int64_t process = 0;
  // acquire/release: token or kNoToken; read: id of the value read; write: id of the
  // value written; cas: id of the expected value.
  std::int64_t arg = kNoToken;
  std::int64_t arg2 = 0;  // cas: id of the new value
  std::uint64_t invoke_index = 0;
  std::uint64_t complete_index = 0;  // of the ok/info line; invoke_index when cut short
  OpKind kind = OpKind::kAcquire;
  bool info = false;  // completed `info` (or never completed): may take effect or not
  // A release no line records: its process was retired (an `info` op) while it held the
  // lock. invoke_index/complete_index are those of the retiring op.
  bool implied = false;

  bool is_lock_op() const { return kind == OpKind::kAcquire || kind == OpKind::kRelease; }
};

struct Partition {
  std::string key;
  PodVector<LinOp> ops;              // in order of completion in the history
  std::vector<std::string> values;   // interned values; values[0] == "null"
};

using fencecheck::to_string;

}  // namespace fencecheck::linear
