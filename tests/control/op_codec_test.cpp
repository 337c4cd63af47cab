// The control plane's op codec: every op of the vocabulary survives encode → decode, ok values
// come back in the history's shape, and malformed values or requests are clear errors.
#include "harness/control/op_codec.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "ops/ops.h"

namespace fencecheck {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

TEST(OpCodec, EveryOpRoundTrips) {
  DecodedOp a = decode_invoke(encode_invoke(OpFn::kAcquire, "l0", nullptr, milliseconds(750)));
  EXPECT_EQ(a.f, OpFn::kAcquire);
  EXPECT_EQ(a.key, "l0");
  EXPECT_EQ(a.ttl, milliseconds(750));

  DecodedOp r = decode_invoke(encode_invoke(OpFn::kRelease, "l0", {{"token", 7}}, milliseconds(0)));
  EXPECT_EQ(r.f, OpFn::kRelease);
  EXPECT_EQ(r.token, 7);
  EXPECT_EQ(decode_invoke(encode_invoke(OpFn::kRelease, "l0", {{"token", nullptr}}, {})).token, std::nullopt);

  EXPECT_EQ(decode_invoke(encode_invoke(OpFn::kRead, "k0", nullptr, {})).f, OpFn::kRead);

  DecodedOp w = decode_invoke(encode_invoke(OpFn::kWrite, "k0", {{"token", 3}, {"value", {1, 2}}}, {}));
  EXPECT_EQ(w.f, OpFn::kWrite);
  EXPECT_EQ(w.token, 3);
  EXPECT_EQ(json::parse(w.value_json), json({1, 2}));

  DecodedOp c = decode_invoke(encode_invoke(OpFn::kCas, "k0", {{"expect", nullptr}, {"value", "x"}}, {}));
  EXPECT_EQ(c.f, OpFn::kCas);
  EXPECT_EQ(c.expect_json, "null");
  EXPECT_EQ(c.value_json, "\"x\"");
  EXPECT_EQ(c.token, std::nullopt);
}

TEST(OpCodec, OkValuesHaveTheHistorysShape) {
  proto::InvokeReply granted;
  granted.set_type(proto::InvokeReply::OK);
  granted.mutable_result()->set_token(12);
  EXPECT_EQ(decode_ok_value(OpFn::kAcquire, granted), json({{"token", 12}}));
  granted.mutable_result()->clear_token();
  EXPECT_EQ(decode_ok_value(OpFn::kAcquire, granted), json({{"token", nullptr}}));

  proto::InvokeReply read;
  read.mutable_result()->set_value_json("[1,2]");
  EXPECT_EQ(decode_ok_value(OpFn::kRead, read), json({1, 2}));
  read.mutable_result()->set_value_json("{oops");
  EXPECT_THROW(decode_ok_value(OpFn::kRead, read), std::invalid_argument);
  EXPECT_THROW(decode_ok_value(OpFn::kAcquire, proto::InvokeReply{}), std::invalid_argument);
  EXPECT_EQ(decode_ok_value(OpFn::kWrite, proto::InvokeReply{}), nullptr);
  // What the session records: the repeat rule of the op's declaration on top.
  json write = {{"token", 1}, {"value", {5}}};
  EXPECT_EQ(completion_value(OpFn::kWrite, OpType::kInfo, write, nullptr), write);
  EXPECT_EQ(completion_value(OpFn::kAcquire, OpType::kFail, nullptr, json({{"token", 1}})), nullptr);
}

TEST(OpCodec, MalformedValuesAndRequestsAreErrors) {
  EXPECT_THROW(encode_invoke(OpFn::kWrite, "k", {{"token", 1}}, {}), std::invalid_argument);
  EXPECT_THROW(encode_invoke(OpFn::kWrite, "k", {{"token", "x"}, {"value", 1}}, {}), std::invalid_argument);
  EXPECT_THROW(encode_invoke(OpFn::kRelease, "k", nullptr, {}), std::invalid_argument);
  EXPECT_THROW(encode_invoke(OpFn::kCas, "k", {{"value", 1}}, {}), std::invalid_argument);
  EXPECT_THROW(encode_invoke(OpFn::kNemesis, "k", nullptr, {}), std::invalid_argument);
  EXPECT_THROW(decode_invoke(proto::InvokeRequest{}), std::invalid_argument);
  proto::InvokeRequest unknown;
  unknown.set_f("frobnicate");
  EXPECT_THROW(decode_invoke(unknown), std::invalid_argument);
}

// The codec has no code per op: an op declared only in the vocabulary travels by its
// declaration's shapes.
TEST(OpCodec, ADeclaredOpTravelsByItsShapes) {
  const OpFn put = declare_op({.name = "codec-test-put", .runs_at = OpPlace::kResource, .invoke = ValueShape::kTokenAndValue,
                               .ok = ValueShape::kTokenAndValue, .repeats_invoke_value = true, .decodes = {}});
  const OpFn lease = declare_op({.name = "codec-test-lease", .runs_at = OpPlace::kLockService,
                                 .invoke = ValueShape::kNull, .ok = ValueShape::kToken, .decodes = {}});
  proto::InvokeRequest request = encode_invoke(put, "k1", {{"token", 4}, {"value", {"a"}}}, milliseconds(9));
  EXPECT_EQ(request.f(), "codec-test-put");
  EXPECT_EQ(request.ttl_ms(), 0) << "only ops on the lock service carry a lease";
  DecodedOp d = decode_invoke(request);
  EXPECT_EQ(d.f, put);
  EXPECT_EQ(d.token, 4);
  EXPECT_EQ(json::parse(d.value_json), json({"a"}));
  EXPECT_THROW(encode_invoke(put, "k1", {{"token", 4}}, {}), std::invalid_argument);

  EXPECT_EQ(decode_invoke(encode_invoke(lease, "l1", nullptr, milliseconds(9))).ttl, milliseconds(9));
  proto::InvokeReply ok;
  ok.mutable_result()->set_token(3);
  EXPECT_EQ(decode_ok_value(lease, ok), json({{"token", 3}}));
  EXPECT_EQ(decode_ok_value(put, ok), nullptr) << "its completions repeat the invoke value";
}

}  // namespace
}  // namespace fencecheck
