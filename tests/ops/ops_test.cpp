// The op vocabulary (ops/ops.h): names, value shapes per phase, the completion-value rule,
// and the rules a declaration must follow.
#include "ops/ops.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace fencecheck {
namespace {

using json = nlohmann::json;

const OpFn kNamedOps[] = {OpFn::kAcquire, OpFn::kRelease, OpFn::kRead, OpFn::kWrite, OpFn::kCas};

TEST(Ops, EnumeratorsNameTheirRows) {
  EXPECT_EQ(op_names().substr(0, 34), "acquire, release, read, write, cas");
  for (OpFn f : kNamedOps) {
    const OpSpec& spec = op_spec(f);
    EXPECT_EQ(&spec, &kBuiltinOps[static_cast<std::size_t>(f)]);
    EXPECT_EQ(find_op(spec.name), f);
    EXPECT_EQ(to_string(f), spec.name);
  }
  EXPECT_EQ(find_op("lock"), std::nullopt);
  EXPECT_EQ(find_op("nemesis"), std::nullopt);
  EXPECT_EQ(to_string(OpFn::kNemesis), "nemesis");
  EXPECT_THROW(op_spec(OpFn::kNemesis), std::invalid_argument);
  EXPECT_THROW(op_spec(static_cast<OpFn>(200)), std::invalid_argument);
  const std::vector<OpFn> all = client_ops();
  ASSERT_GE(all.size(), std::size(kNamedOps));
  for (std::size_t i = 0; i < std::size(kNamedOps); ++i) EXPECT_EQ(all[i], kNamedOps[i]) << "rows come first, in order";
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
  EXPECT_TRUE(op_spec(OpFn::kWrite).decodes.appended);
  EXPECT_TRUE(op_spec(OpFn::kRead).decodes.read_items);
  EXPECT_FALSE(op_spec(OpFn::kRead).changes_state);
  EXPECT_EQ(op_spec(OpFn::kAcquire).runs_at, OpPlace::kLockService);
  EXPECT_EQ(op_spec(OpFn::kCas).runs_at, OpPlace::kResource);
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

TEST(Ops, InconsistentDeclarationsAreRefused) {
  // Each breaks one rule of declaration_problem(); declare_op refuses it and says why.
  const OpSpec bad[] = {
      {.name = "", .decodes = {}},
      {.name = "nemesis", .decodes = {}},
      {.name = "ops-test-a", .invoke = ValueShape::kToken, .ok = ValueShape::kNull, .repeats_invoke_value = true,
       .decodes = {}},
      {.name = "ops-test-b", .invoke = ValueShape::kNull, .ok = ValueShape::kAny, .decodes = {.token = true}},
      {.name = "ops-test-c", .invoke = ValueShape::kToken, .ok = ValueShape::kToken, .decodes = {.appended = true}},
      {.name = "ops-test-d", .invoke = ValueShape::kNull, .ok = ValueShape::kToken, .decodes = {.read_items = true}},
  };
  for (const OpSpec& op : bad) {
    EXPECT_FALSE(declaration_problem(op).empty()) << op.name;
    EXPECT_THROW(declare_op(op), std::invalid_argument) << op.name;
    EXPECT_EQ(find_op(op.name), std::nullopt) << op.name;
  }
  EXPECT_THROW(declare_op({.name = "write", .invoke = ValueShape::kAny, .ok = ValueShape::kAny, .decodes = {}}), std::invalid_argument)
      << "a taken name";
}

TEST(Ops, ADeclaredOpJoinsTheVocabulary) {
  // The vocabulary is process-wide: under --gtest_repeat the op is there from the first round.
  if (find_op("ops-test-touch")) GTEST_SKIP() << "declared by an earlier repeat of this test";
  const std::size_t before = client_ops().size();
  const OpFn f = declare_op({.name = "ops-test-touch", .runs_at = OpPlace::kResource, .changes_state = false,
                             .invoke = ValueShape::kNull, .ok = ValueShape::kAny, .decodes = {}});
  EXPECT_EQ(client_ops().size(), before + 1);
  EXPECT_EQ(client_ops().back(), f);
  EXPECT_EQ(find_op("ops-test-touch"), f);
  EXPECT_EQ(to_string(f), "ops-test-touch");
  EXPECT_NE(op_names().find(", ops-test-touch"), std::string::npos);
  EXPECT_EQ(op_spec(f).runs_at, OpPlace::kResource);
  EXPECT_EQ(completion_value(f, OpType::kOk, nullptr, 5), 5);
}

}  // namespace
}  // namespace fencecheck
