// The readers and the checker registry follow from the op vocabulary (ops/ops.h): every row
// is read in every outcome, an op declared once (here, in the test) is read back with the
// fields its declaration promises and its shape enforced, and the checkers of a workload
// follow from the ops it issues.
#include <gtest/gtest.h>

#include "checkers/history_reader.h"
#include "checkers/registry.h"
#include "tests/checkers/history_builder.h"
#include "workloads/workload.h"

namespace fencecheck::testing {
namespace {

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

TEST(Vocabulary, TheReaderAcceptsEveryRowInEveryOutcome) {
  // Each op of the vocabulary, invoked and completed every way, with values of its shapes
  // built by completion_value: what the controller records.
  HistoryBuilder h;
  std::int64_t process = 1;
  double t = 0;
  for (OpFn f : client_ops()) {
    const OpSpec& spec = op_spec(f);
    if (spec.notice) {  // never invoked: one notice line (a promise's must say what it promised)
      json value = spec.decodes.promise ? json{{"valid_ms", 5}} : sample(spec.shape(OpType::kNotice));
      h.op(process, "notice", std::string(spec.name).c_str(), "k", value, t += 1);
      continue;
    }
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

// A made-up op, declared once: it appends to a resource key under a token, and its
// completions repeat its invoke value.
OpFn push() {
  static const OpFn f = declare_op({.name = "push", .runs_at = OpPlace::kResource, .changes_state = true,
                                    .invoke = ValueShape::kTokenAndValue, .ok = ValueShape::kTokenAndValue,
                                    .repeats_invoke_value = true, .decodes = {.token = true, .appended = true}});
  return f;
}

std::vector<Event> read_all(const HistoryBuilder& h) {
  HistoryReader r(h.history_path());
  std::vector<Event> events;
  Event e;
  while (r.next(e)) events.push_back(e);
  return events;
}

TEST(Vocabulary, ADeclaredOpIsReadWithTheFieldsItsDeclarationPromises) {
  const OpFn f = push();
  HistoryBuilder h;
  const json value = {{"token", 8}, {"value", {"a", json{{"z", 1}, {"b", 2}}}}};
  h.op(3, "invoke", "push", "k1", value, 1).op(3, "ok", "push", "k1", value, 2);
  std::vector<Event> events = read_all(h);
  ASSERT_EQ(events.size(), 2u);
  for (const Event& e : events) {
    EXPECT_EQ(e.f, f);
    EXPECT_EQ(e.f_name, "push");
    EXPECT_EQ(e.key, "k1");
    EXPECT_EQ(e.token, 8);
    EXPECT_EQ(e.appended, R"({"b":2,"z":1})") << "the last item, canonical";
    EXPECT_EQ(e.value, R"({"token":8,"value":["a",{"b":2,"z":1}]})");
    EXPECT_TRUE(e.read_items.empty()) << "it does not decode items read";
  }
  EXPECT_EQ(events[0].type, OpType::kInvoke);
  EXPECT_EQ(events[1].type, OpType::kOk);
}

// Reads a history whose second line breaks push's declared shape; returns the error.
InputError shape_error(const json& bad_value) {
  push();
  HistoryBuilder h;
  h.op(3, "invoke", "push", "k1", {{"token", 1}, {"value", {1}}}, 1);
  h.op(3, "ok", "push", "k1", bad_value, 2);
  try {
    read_all(h);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << bad_value.dump();
  return InputError("", 0, "", "");
}

TEST(Vocabulary, ALineBreakingADeclaredShapeIsRejectedNamingLineAndField) {
  InputError no_value = shape_error({{"token", 1}});
  EXPECT_EQ(no_value.line(), 2u);
  EXPECT_EQ(no_value.field(), "value.value");
  EXPECT_NE(std::string(no_value.what()).find("history.jsonl:2:"), std::string::npos) << no_value.what();

  InputError not_object = shape_error({1});
  EXPECT_EQ(not_object.line(), 2u);
  EXPECT_EQ(not_object.field(), "value");
  EXPECT_NE(std::string(not_object.what()).find("must be an object {\"token\": N|null, \"value\": X}"),
            std::string::npos)
      << not_object.what();

  InputError bad_token = shape_error({{"token", "x"}, {"value", {1}}});
  EXPECT_EQ(bad_token.line(), 2u);
  EXPECT_NE(bad_token.field().find("token"), std::string::npos) << bad_token.what();
}

std::vector<std::string> checkers_of(const char* workload) {
  const WorkloadInfo* w = find_workload(workload);
  EXPECT_NE(w, nullptr) << workload;
  return w ? checkers_for(w->ops) : std::vector<std::string>{};
}

TEST(Vocabulary, TheCheckersOfAWorkloadFollowFromItsOps) {
  using names = std::vector<std::string>;
  EXPECT_EQ(checkers_of("lock"), (names{"exclusion", "tokens", "linearizable"}));
  EXPECT_EQ(checkers_of("lock-append"), (names{"exclusion", "tokens", "resource", "linearizable"}));
  EXPECT_EQ(checkers_of("cas"), (names{"resource", "linearizable"}));
  // The rule itself: lock ops bring exclusion and tokens, ops on the resource bring the
  // resource checker (a declared one too), any op brings linearizable.
  EXPECT_EQ(checkers_for({OpFn::kRelease}), (names{"exclusion", "tokens", "linearizable"}));
  EXPECT_EQ(checkers_for({push()}), (names{"resource", "linearizable"}));
  EXPECT_EQ(checkers_for({}), names{});
  for (const CheckerInfo& c : checker_registry()) EXPECT_NE(c.judges, nullptr) << c.name << " declares no ops";
}

}  // namespace
}  // namespace fencecheck::testing
