// The control plane's op codec: every op of the table survives encode → decode, ok values
// come back in the history's shape, and malformed values or requests are clear errors.
#include "harness/control/op_codec.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "checkers/ops.h"

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
  granted.mutable_granted()->set_token(12);
  EXPECT_EQ(decode_ok_value(OpFn::kAcquire, granted), json({{"token", 12}}));
  granted.mutable_granted()->clear_token();
  EXPECT_EQ(decode_ok_value(OpFn::kAcquire, granted), json({{"token", nullptr}}));

  proto::InvokeReply read;
  read.mutable_read()->set_value_json("[1,2]");
  EXPECT_EQ(decode_ok_value(OpFn::kRead, read), json({1, 2}));
  read.mutable_read()->set_value_json("{oops");
  EXPECT_THROW(decode_ok_value(OpFn::kRead, read), std::invalid_argument);
  EXPECT_THROW(decode_ok_value(OpFn::kAcquire, proto::InvokeReply{}), std::invalid_argument);
  EXPECT_EQ(decode_ok_value(OpFn::kWrite, proto::InvokeReply{}), nullptr);
  // What the session records: the repeat rule of the op table on top.
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
}

}  // namespace
}  // namespace fencecheck
