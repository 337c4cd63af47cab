// Client ops on the wire (proto/worker.proto) and in the history (docs/history.md),
// converted in one place for both ends of the control plane: the controller encodes an op
// from its history invoke value and reads the ok value back from the reply; the worker
// decodes the request. Nothing here is written per op: which fields travel follows from the
// op's declaration (ops/ops.h: its value shapes and where it runs). Pure functions;
// thread-safe. Malformed input throws std::invalid_argument saying what is wrong.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ops/ops.h"
#include "proto/worker.pb.h"

namespace fencecheck {

// The request for op f on key whose history invoke value is invoke_value; ttl is the
// lease of an op on the lock service; fence, the token an op whose value carries none (a
// read) shows the resource. std::invalid_argument for OpFn::kNemesis or a value not of the
// op's invoke shape.
proto::InvokeRequest encode_invoke(OpFn f, const std::string& key, const nlohmann::json& invoke_value,
                                   std::chrono::milliseconds ttl,
                                   std::optional<std::int64_t> fence = std::nullopt);

// What the worker needs of a request.
struct DecodedOp {
  OpFn f = OpFn::kAcquire;
  std::string key;
  std::optional<std::int64_t> token;  // the value's token, or a read's fence
  std::string value_json;             // write, cas: the new value (JSON text)
  std::string expect_json;            // cas
  std::chrono::milliseconds ttl{0};   // ops on the lock service
};
// std::invalid_argument when the request names no known op.
DecodedOp decode_invoke(const proto::InvokeRequest& request);

// The history's ok value of op f from an OK reply, of the op's ok shape: {"token": N|null}
// for an acquire, the value read for a read, null for the ops whose completions repeat
// their invoke value (completion_value in ops/ops.h records the invoke value for them).
nlohmann::json decode_ok_value(OpFn f, const proto::InvokeReply& reply);

}  // namespace fencecheck
