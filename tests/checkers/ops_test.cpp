// The op table: names, value shapes per phase, and the completion-value rule.
#include "checkers/ops.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

const OpFn kClientOps[] = {OpFn::kAcquire, OpFn::kRelease, OpFn::kRead, OpFn::kWrite, OpFn::kCas};

TEST(Ops, NamesRoundTripThroughTheTable) {
  EXPECT_EQ(op_names(), "acquire, release, read, write, cas");
  for (OpFn f : kClientOps) {
    const OpSpec& spec = op_spec(f);
    EXPECT_EQ(spec.fn, f);
    EXPECT_EQ(find_op(spec.name), &spec);
    EXPECT_EQ(to_string(f), spec.name);
    EXPECT_EQ(parse_client_fn(spec.name), f);
  }
  EXPECT_EQ(find_op("lock"), nullptr);
  EXPECT_EQ(parse_client_fn("nemesis"), std::nullopt);
  EXPECT_EQ(to_string(OpFn::kNemesis), "nemesis");
  EXPECT_THROW(op_spec(OpFn::kNemesis), std::invalid_argument);
}

TEST(Ops, ShapesFollowTheHistoryFormat) {
  const OpSpec& acquire = op_spec(OpFn::kAcquire);
  EXPECT_EQ(acquire.shape(OpType::kInvoke), ValueShape::kNull);
  EXPECT_EQ(acquire.shape(OpType::kOk), ValueShape::kToken);
  EXPECT_EQ(acquire.shape(OpType::kFail), ValueShape::kNull);
  EXPECT_EQ(acquire.shape(OpType::kInfo), ValueShape::kNull);
  for (OpType t : {OpType::kInvoke, OpType::kOk, OpType::kFail, OpType::kInfo}) {
    EXPECT_EQ(op_spec(OpFn::kRelease).shape(t), ValueShape::kToken);
    EXPECT_EQ(op_spec(OpFn::kWrite).shape(t), ValueShape::kTokenAndValue);
    EXPECT_EQ(op_spec(OpFn::kCas).shape(t), ValueShape::kExpectAndValue);
  }
  EXPECT_EQ(op_spec(OpFn::kRead).shape(OpType::kOk), ValueShape::kAny);
  EXPECT_EQ(op_spec(OpFn::kRead).shape(OpType::kInfo), ValueShape::kNull);
  EXPECT_TRUE(op_spec(OpFn::kWrite).appends);
  EXPECT_TRUE(op_spec(OpFn::kRead).reads);
}

TEST(Ops, CompletionsOfReleaseWriteAndCasRepeatTheInvokeValue) {
  const json invoke = {{"token", 3}, {"value", {1, 2}}};
  const json ok = {{"token", 9}};
  for (OpFn f : {OpFn::kRelease, OpFn::kWrite, OpFn::kCas}) {
    for (OpType t : {OpType::kOk, OpType::kFail, OpType::kInfo}) {
      EXPECT_EQ(completion_value(f, t, invoke, ok), invoke) << to_string(f) << " " << to_string(t);
    }
  }
  for (OpFn f : {OpFn::kAcquire, OpFn::kRead}) {
    EXPECT_EQ(completion_value(f, OpType::kOk, nullptr, ok), ok);
    EXPECT_EQ(completion_value(f, OpType::kFail, nullptr, ok), nullptr);
    EXPECT_EQ(completion_value(f, OpType::kInfo, nullptr, ok), nullptr);
  }
}

// A value of `shape`, as the history format writes it.
json sample(ValueShape shape) {
  switch (shape) {
    case ValueShape::kNull: return nullptr;
    case ValueShape::kAny: return {1, 2};
    case ValueShape::kToken: return {{"token", 5}};
    case ValueShape::kTokenAndValue: return {{"token", 5}, {"value", {1, 2}}};
    case ValueShape::kExpectAndValue: return {{"expect", nullptr}, {"value", 1}};
  }
  return nullptr;
}

TEST(Ops, TheReaderAcceptsEveryRowInEveryOutcome) {
  // Each op from the table, invoked and completed every way, with values of the table's
  // shapes built by completion_value: what the controller records.
  HistoryBuilder h;
  std::int64_t process = 1;
  double t = 0;
  for (OpFn f : kClientOps) {
    const OpSpec& spec = op_spec(f);
    for (const char* type : {"ok", "fail", "info"}) {
      OpType completion = *parse_op_type(type);
      json invoke = sample(spec.shape(OpType::kInvoke));
      json done = completion_value(f, completion, invoke, sample(spec.ok));
      h.op(process, "invoke", std::string(spec.name).c_str(), "k", invoke, t += 1);
      h.op(process, type, std::string(spec.name).c_str(), "k", done, t += 1);
      if (completion == OpType::kInfo) ++process;  // retired
    }
  }
  EXPECT_NO_THROW(h.check("tokens"));
}

}  // namespace
}  // namespace fencecheck::testing
