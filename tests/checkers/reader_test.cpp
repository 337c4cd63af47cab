#include <gtest/gtest.h>

#include <fstream>

#include "checkers/history_reader.h"
#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

// Writes `lines` after a valid acquire by process 1 and expects an InputError at `line`
// naming `field`, with `fragment` in the message.
void expect_error(const std::vector<std::string>& lines, std::size_t line, const std::string& field,
                  const std::string& fragment) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 0.000001);  // times 0 and 1 ns
  for (const auto& l : lines) h.raw(l);
  try {
    h.check();
    FAIL() << "no error; expected " << field << " at line " << line;
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("history.jsonl:" + std::to_string(line) + ":"),
              std::string::npos)
        << e.what();
  }
}

const std::string kInvoke2 = R"({"index":2,"time":5,"process":2,"type":"invoke","f":"acquire","key":"l0","value":null})";

TEST(Reader, BadJson) { expect_error({R"({"index":2,"time":)"}, 3, "", "malformed JSON"); }
TEST(Reader, NotAnObject) { expect_error({"[1,2]"}, 3, "", "must be a JSON object"); }
TEST(Reader, DuplicateField) {
  expect_error({R"({"index":2,"time":5,"time":6,"process":2,"type":"invoke","f":"acquire","key":"l0"})"}, 3,
               "time", "appears twice");
}
TEST(Reader, MissingIndex) {
  expect_error({R"({"time":5,"process":2,"type":"invoke","f":"acquire","key":"l0"})"}, 3, "index", "missing");
}
TEST(Reader, MissingTime) {
  expect_error({R"({"index":2,"process":2,"type":"invoke","f":"acquire","key":"l0"})"}, 3, "time", "missing");
}
TEST(Reader, MissingKey) {
  expect_error({R"({"index":2,"time":5,"process":2,"type":"invoke","f":"acquire"})"}, 3, "key", "missing");
}
TEST(Reader, MistypedTime) {
  expect_error({R"({"index":2,"time":"5","process":2,"type":"invoke","f":"acquire","key":"l0"})"}, 3, "time",
               "must be an integer");
}
TEST(Reader, MistypedProcess) {
  expect_error({R"({"index":2,"time":5,"process":"p2","type":"invoke","f":"acquire","key":"l0"})"}, 3,
               "process", "integer or \"nemesis\"");
}
TEST(Reader, NegativeProcess) {
  expect_error({R"({"index":2,"time":5,"process":-4,"type":"invoke","f":"acquire","key":"l0"})"}, 3,
               "process", "at least 0");
}
TEST(Reader, UnknownType) {
  expect_error({R"({"index":2,"time":5,"process":2,"type":"done","f":"acquire","key":"l0"})"}, 3, "type",
               "unknown type \"done\"");
}
TEST(Reader, UnknownClientFunction) {
  expect_error({R"({"index":2,"time":5,"process":2,"type":"invoke","f":"lock","key":"l0"})"}, 3, "f",
               "unknown client function \"lock\" (expected one of acquire, release, read, write, cas, lost, renewed)");
}
TEST(Reader, MistypedToken) {
  expect_error({kInvoke2, R"({"index":3,"time":6,"process":2,"type":"ok","f":"acquire","key":"l0","value":{"token":"7"}})"},
               4, "value.token", "integer or null");
}
TEST(Reader, AcquireOkWithoutValue) {
  expect_error({kInvoke2, R"({"index":3,"time":6,"process":2,"type":"ok","f":"acquire","key":"l0"})"}, 4,
               "value", "missing");
}
TEST(Reader, WriteWithoutValueValue) {
  expect_error({R"({"index":2,"time":6,"process":2,"type":"invoke","f":"write","key":"k","value":{"token":1}})"},
               3, "value.value", "missing");
}
TEST(Reader, CasWithoutExpect) {
  expect_error({R"({"index":2,"time":6,"process":2,"type":"invoke","f":"cas","key":"k","value":{"value":1}})"},
               3, "value.expect", "missing");
}
TEST(Reader, ValuesFollowTheOpTableShapes) {
  expect_error({R"({"index":2,"time":5,"process":2,"type":"invoke","f":"acquire","key":"l0","value":{"token":1}})"},
               3, "value", "must be null for invoke acquire, found an object");
  expect_error({R"({"index":2,"time":5,"process":2,"type":"invoke","f":"read","key":"k","value":null})",
                R"({"index":3,"time":6,"process":2,"type":"fail","f":"read","key":"k","value":[1]})"},
               4, "value", "must be null for fail read, found an array");
  expect_error({R"({"index":2,"time":5,"process":2,"type":"invoke","f":"release","key":"l0","value":null})"}, 3,
               "value", "must be an object {\"token\": N|null}, found null");
  expect_error({R"({"index":2,"time":5,"process":2,"type":"invoke","f":"cas","key":"k","value":[1,2]})"}, 3,
               "value", "must be an object {\"expect\": X, \"value\": Y}, found an array");
  expect_error({R"({"index":2,"time":5,"process":2,"type":"invoke","f":"write","key":"k"})"}, 3, "value",
               "missing");
}

TEST(Reader, IndexOutOfOrder) {
  expect_error({R"({"index":7,"time":5,"process":2,"type":"invoke","f":"acquire","key":"l0"})"}, 3, "index",
               "expected 2, found 7");
}
TEST(Reader, TimeGoingBackwards) {
  expect_error({R"({"index":2,"time":0,"process":2,"type":"invoke","f":"acquire","key":"l0"})"}, 3, "time",
               "backwards");
}
TEST(Reader, SecondInvokeInFlight) {
  expect_error({kInvoke2, R"({"index":3,"time":6,"process":2,"type":"invoke","f":"read","key":"k"})"}, 4,
               "type", "still in flight");
}
TEST(Reader, CompletionWithoutInvoke) {
  expect_error({R"({"index":2,"time":6,"process":9,"type":"ok","f":"read","key":"k","value":1})"}, 3, "type",
               "no invoke in flight");
}
TEST(Reader, CompletionOfAnotherFunction) {
  expect_error({kInvoke2, R"({"index":3,"time":6,"process":2,"type":"ok","f":"release","key":"l0","value":{"token":null}})"},
               4, "f", "does not match");
}
TEST(Reader, CompletionOfAnotherKey) {
  expect_error({kInvoke2, R"({"index":3,"time":6,"process":2,"type":"fail","f":"acquire","key":"l1"})"}, 4,
               "key", "does not match");
}
TEST(Reader, RetiredProcessAppearsAgain) {
  expect_error({kInvoke2, R"({"index":3,"time":6,"process":2,"type":"info","f":"acquire","key":"l0"})",
                R"({"index":4,"time":7,"process":2,"type":"invoke","f":"acquire","key":"l0"})"},
               5, "process", "retired");
}
// A notice (`lost`) is neither invoke nor completion: it may come with an op of its process
// in flight, only `lost` has notice lines, and `lost` has nothing else.
TEST(Reader, LostNoticesAreReadAndTheirTypeIsChecked) {
  HistoryBuilder ok;
  ok.acquire(1, "l0", 0, 1).op(1, "invoke", "read", "k", nullptr, 2).lost(1, "l0", 3);
  ok.op(1, "ok", "read", "k", nullptr, 4).lost(1, "l0", 5);
  EXPECT_NO_THROW(ok.check());
  expect_error({R"({"index":2,"time":6,"process":1,"type":"notice","f":"acquire","key":"l0"})"}, 3, "type",
               "is an op, not a notice: type notice is for lost, renewed");
  expect_error({R"({"index":2,"time":6,"process":1,"type":"invoke","f":"lost","key":"l0"})"}, 3, "type",
               "\"lost\" is a notice: its lines have type notice, not \"invoke\"");
  expect_error({R"({"index":2,"time":6,"process":1,"type":"notice","f":"lost"})"}, 3, "key", "missing");
  expect_error({kInvoke2, R"({"index":3,"time":6,"process":2,"type":"info","f":"acquire","key":"l0"})",
                R"({"index":4,"time":7,"process":2,"type":"notice","f":"lost","key":"l0"})"},
               5, "process", "retired");
}
TEST(Reader, NemesisMustBeInfo) {
  expect_error({R"({"index":2,"time":6,"process":"nemesis","type":"invoke","f":"pause","value":["c1"]})"}, 3,
               "type", "nemesis");
}

TEST(Reader, TruncatedLastLineIsAWarningAndThePrefixIsChecked) {
  HistoryBuilder h;  // an overlap, then a writer killed mid-line
  h.acquire(1, "l0", 0, 1).acquire(2, "l0", 2, 3).nemesis("pause", 3.5);
  h.raw(R"({"index":5,"time":4000000,"process":1,"type":"inv)");
  CheckRequest req;
  req.history = h.history_path(/*final_newline=*/false);
  auto report = run_checks(req);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("history.jsonl:6: last line is truncated"), std::string::npos)
      << report.warnings[0];
  EXPECT_EQ(report.events, 5u);
  EXPECT_EQ(report.exit_code(), 1);
}

TEST(Reader, BrokenLineWithNewlineIsAnError) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).raw(R"({"index":2,"time":4000000,"process":1,"type":"inv)");
  CheckRequest req;
  req.history = h.history_path(/*final_newline=*/true);
  EXPECT_THROW(run_checks(req), InputError);
}

TEST(Reader, LastLineWithoutNewlineButCompleteIsRead) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1);
  CheckRequest req;
  req.history = h.history_path(/*final_newline=*/false);
  auto report = run_checks(req);
  EXPECT_EQ(report.events, 2u);
  EXPECT_TRUE(report.warnings.empty());
}

TEST(Reader, DecodesValues) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 42).write(1, "k", {1, "x", json{{"b", 1}}}, "ok", 2, 3, 42);
  h.read(1, "k", {1, 2}, 4, 5).nemesis("pause", 6);
  HistoryReader r(h.history_path());
  std::vector<Event> events;
  Event e;
  while (r.next(e)) events.push_back(e);
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[1].token, 42);
  EXPECT_EQ(events[1].node, "c1");
  EXPECT_EQ(events[3].appended, R"({"b":1})");
  EXPECT_EQ(events[3].token, 42);
  EXPECT_TRUE(events[5].read_is_array);
  EXPECT_EQ(events[5].read_items, (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(events[6].is_nemesis());
  EXPECT_EQ(events[6].f_name, "pause");
  EXPECT_EQ(events[6].value, R"(["c1"])");
}

TEST(Reader, LongStringsSurviveIntoResults) {
  const std::string node = "c2-a-much-longer-node-name-than-fits-in-place";
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).op(2, "invoke", "acquire", "l0", nullptr, 2, node);
  h.op(2, "ok", "acquire", "l0", {{"token", nullptr}}, 3, node).nemesis("pause", 4);
  h.resource("k0", "write", 1, true, nullptr, node);
  auto report = h.check();
  auto r = report.results.at(0).second;
  EXPECT_NE(r.summary.find("process 2 (" + node + ") acquired it"), std::string::npos) << r.summary;
  EXPECT_NO_THROW(report.to_json(CheckRequest{}).dump());
  ResourceLogReader log(h.resource_path());
  ResourceEntry e;
  ASSERT_TRUE(log.next(e));
  EXPECT_EQ(e.client, node);
}

TEST(Reader, MissingFileIsAnInputError) {
  EXPECT_THROW(HistoryReader("/nonexistent/history.jsonl"), InputError);
}

TEST(ResourceReader, RejectsMalformedEntries) {
  auto bad = [](const std::string& line, const std::string& field) {
    HistoryBuilder h;
    std::string path = h.dir() + "/resource.jsonl";
    std::ofstream(path) << line << "\n";
    ResourceLogReader r(path);
    ResourceEntry e;
    try {
      r.next(e);
      ADD_FAILURE() << "accepted: " << line;
    } catch (const InputError& err) {
      EXPECT_EQ(err.field(), field) << err.what();
      EXPECT_EQ(err.line(), 1u);
    }
  };
  bad(R"({"seq":0,"time":1,"key":"k","op":"delete","token":1,"accepted":true})", "op");
  bad(R"({"seq":0,"time":1,"key":"k","op":"write","token":1,"accepted":"yes"})", "accepted");
  bad(R"({"seq":0,"time":1,"key":"k","op":"write","accepted":true})", "token");
  bad(R"({"seq":0,"time":1,"op":"write","token":1,"accepted":true})", "key");
  bad(R"({"seq":0,"time":1,"key":"k","op":"write","token":1.5,"accepted":true})", "token");
  bad(R"({"seq":0,"time":1,"key":"k","op":"cas","token":null,"value":1,"accepted":true})", "expect");
}

TEST(ResourceReader, CasEntriesCarryTheirExpectationCanonically) {
  HistoryBuilder h;
  h.resource_cas("k0", json::parse(R"({"b":1,"a":2.0})"), 5, true);
  ResourceLogReader log(h.resource_path());
  ResourceEntry e;
  ASSERT_TRUE(log.next(e));
  EXPECT_EQ(e.op, ResourceEntry::Op::kCas);
  EXPECT_EQ(e.expect, R"({"a":2,"b":1})");
  EXPECT_EQ(e.value, "5");
}

}  // namespace
}  // namespace fencecheck::testing
