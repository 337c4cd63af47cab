// The EDN tokenizer and the Jepsen history reader: values, layouts, the mapping to our
// events, errors with line and column, and end-to-end verdicts on hand-written fixtures.
#include <gtest/gtest.h>

#include <sstream>

#include "checkers/edn/edn.h"
#include "checkers/edn/edn_history_reader.h"
#include "checkers/linear/linearizable_checker.h"

namespace fencecheck {
namespace {

std::vector<edn::Value> parse_all(const std::string& text) {
  std::istringstream in(text);
  edn::EdnParser p(in, "t.edn");
  std::vector<edn::Value> out;
  for (edn::Value v; p.next(v);) out.push_back(v);
  return out;
}

std::vector<Event> read_events(const std::string& text) {
  EdnHistoryReader r(std::make_unique<std::istringstream>(text), "t.edn");
  std::vector<Event> out;
  for (Event e; r.next(e);) out.push_back(e);
  return out;
}

std::string read_error(const std::string& text) {
  try {
    read_events(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

CheckResult check_file(const std::string& name) {
  EdnHistoryReader r(std::string(FC_EDN_DATA_DIR) + "/" + name);
  auto checker = make_linearizable_checker(CheckOptions{});
  for (Event e; r.next(e);) checker->observe(e);
  return checker->finish();
}

TEST(EdnParser, ReadsEveryKindOfValue) {
  auto v = parse_all(R"({:s "a\"b\n\u00e9" :c \x :nl \newline :i -42 :big 7N :f 1.5 :m 2.5M :inf ##Inf
                         :k :ns/kw :sym foo.bar/baz :n nil :t true :set #{1 2} :l (1 [2 {:x 3}])
                         :inst #inst "2024-01-01T00:00:00Z"})");
  ASSERT_EQ(v.size(), 1u);
  const edn::Value& m = v[0];
  EXPECT_EQ(m.get("s")->text, "a\"b\n\xc3\xa9");
  EXPECT_EQ(m.get("c")->text, "x");
  EXPECT_EQ(m.get("nl")->text, "\n");
  EXPECT_EQ(m.get("i")->integer, -42);
  EXPECT_EQ(m.get("big")->integer, 7);
  EXPECT_DOUBLE_EQ(m.get("f")->floating, 1.5);
  EXPECT_DOUBLE_EQ(m.get("m")->floating, 2.5);
  EXPECT_TRUE(std::isinf(m.get("inf")->floating));
  EXPECT_EQ(m.get("k")->text, "ns/kw");
  EXPECT_EQ(m.get("sym")->kind, edn::Value::Kind::kSymbol);
  EXPECT_EQ(m.get("n")->kind, edn::Value::Kind::kNil);
  EXPECT_TRUE(m.get("t")->boolean);
  EXPECT_EQ(m.get("set")->kind, edn::Value::Kind::kSet);
  EXPECT_EQ(edn::to_json(*m.get("l")).dump(), R"([1,[2,{"x":3}]])");
  EXPECT_EQ(m.get("inst")->text, "inst");
  EXPECT_EQ(edn::to_json(*m.get("inst")), "2024-01-01T00:00:00Z");
}

TEST(EdnParser, StreamsTheItemsOfOneTopLevelVector) {
  auto v = parse_all("[{:a 1}\n {:a 2}, #_ {:a 99} {:a 3}] ; trailing comment\n");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[2].get("a")->integer, 3);
  EXPECT_EQ(v[1].line, 2u);
  EXPECT_EQ(v[1].column, 2u);
}

TEST(EdnParser, ErrorsNameLineAndColumn) {
  auto error = [](const std::string& text) {
    try {
      parse_all(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("{:a 1}\n{:b \"open"), "t.edn:2: field 'edn': column 5: string is not closed before end of input");
  EXPECT_EQ(error("{:a 1 :b}"), "t.edn:1: field 'edn': column 1: map has a key without a value");
  EXPECT_EQ(error("{:a 1]"), "t.edn:1: field 'edn': column 6: unexpected ']'");
  EXPECT_EQ(error("  [{:a 1}"), "t.edn:1: field 'edn': column 3: sequence is not closed: missing ']'");
  EXPECT_EQ(error("{:a \"\\q\"}"), "t.edn:1: field 'edn': column 6: unknown escape '\\q' in string");
  EXPECT_EQ(error("{:a 12x}"), "t.edn:1: field 'edn': column 5: malformed number \"12x\"");
  EXPECT_NE(error(std::string(500, '[')).find("nested deeper"), std::string::npos);
  // Histories become JSON, which must be UTF-8.
  EXPECT_EQ(error("{:a \"ok\xff\xfe\"}"), "t.edn:1: field 'edn': column 5: string is not valid UTF-8");
  EXPECT_EQ(error("{:k\xff 1}"), "t.edn:1: field 'edn': column 2: token is not valid UTF-8");
  EXPECT_NE(error("{:a \"\\u12\"}").find("\\u must be followed by 4 hex digits"), std::string::npos);
  EXPECT_NE(error("{:a \"\\ud800\"}").find("lone surrogate"), std::string::npos);
  EXPECT_EQ(parse_all("{:a \"caf\xc3\xa9 \\u00e9\"}").size(), 1u);
}

TEST(EdnHistoryReader, MapsJepsenOpsToEvents) {
  auto events = read_events(
      "{:type :invoke, :f :acquire, :value nil, :process 0, :time 5, :index 10}\n"
      "{:type :ok, :f :acquire, :value 7, :process 0, :time 6, :index 11}\n"
      "{:type :info, :f :kill, :value [:n1], :process :nemesis, :time 7, :index 12}\n"
      "{:type :invoke, :f :release, :value {:token 7}, :process 0, :time 8, :index 13}\n"
      "{:type :fail, :f :release, :value {:token 7}, :process 0, :time 9, :index 14, :error [:timeout 3]}\n");
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].index, 10u);
  EXPECT_EQ(events[0].key, kEdnDefaultKey);
  EXPECT_EQ(events[1].value, R"({"token":7})");
  EXPECT_EQ(events[1].token, 7);
  EXPECT_TRUE(events[2].is_nemesis());
  EXPECT_EQ(events[2].f_name, "kill");
  EXPECT_EQ(events[2].key, "");
  EXPECT_EQ(events[3].f, OpFn::kRelease);
  EXPECT_EQ(events[4].error, R"(["timeout",3])");
  EXPECT_EQ(events[4].line, 5u);
}

TEST(EdnHistoryReader, SplitsIndependentTuplesAndShapesValues) {
  auto events = read_events(
      "{:type :invoke, :f :write, :value [\"a\" [1 2]], :process 0, :time 1}\n"
      "{:type :ok, :f :write, :value [\"a\" [1 2]], :process 0, :time 2}\n"
      "{:type :invoke, :f :cas, :value [:b [1 2]], :process 0, :time 3}\n"
      "{:type :ok, :f :cas, :value [:b [1 2]], :process 0, :time 4}\n"
      "{:type :invoke, :f :read, :value [3 nil], :process 0, :time 5}\n"
      "{:type :ok, :f :read, :value [3 [4 5]], :process 0, :time 6}\n");
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[0].key, "a");
  EXPECT_EQ(events[0].index, 0u);  // numbered in order when :index is absent
  EXPECT_EQ(events[0].value, R"({"token":null,"value":[1,2]})");
  EXPECT_EQ(events[0].appended, "2");
  EXPECT_EQ(events[2].key, "b");
  EXPECT_EQ(events[2].value, R"({"expect":1,"value":2})");
  EXPECT_EQ(events[5].key, "3");
  EXPECT_EQ(events[5].value, "[4,5]");
  EXPECT_TRUE(events[5].read_is_array);
  EXPECT_EQ(events[5].read_items.size(), 2u);
}

TEST(EdnHistoryReader, ValuesAreCanonicalJson) {
  // EDN floats that are whole numbers compare equal to the integers JSONL histories hold.
  // (Three-item vectors: a two-item one would read as a jepsen.independent tuple.)
  auto events = read_events(
      "{:type :invoke, :f :write, :value [{:b 2.50 :a \"\\u00e9\"} 1 3.0], :process 0, :time 1}\n"
      "{:type :ok, :f :write, :value [{:b 2.50 :a \"\\u00e9\"} 1 3.0], :process 0, :time 2}\n"
      "{:type :invoke, :f :read, :value nil, :process 1, :time 3}\n"
      "{:type :ok, :f :read, :value [1.0 -0.0 {:b 1 :a 2}], :process 1, :time 4}\n");
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].value, "{\"token\":null,\"value\":[{\"a\":\"\xc3\xa9\",\"b\":2.5},1,3]}");
  EXPECT_EQ(events[1].appended, "3");
  EXPECT_EQ(events[3].value, "[1,0,{\"a\":2,\"b\":1}]");
  EXPECT_EQ(events[3].read_items, (std::vector<std::string>{"1", "0", "{\"a\":2,\"b\":1}"}));
}

TEST(EdnHistoryReader, RejectsBadOpsWithLineFieldAndColumn) {
  const std::string ok0 = "{:type :invoke, :f :read, :process 0, :time 1}\n";
  EXPECT_EQ(read_error("{:f :read, :process 0, :time 1}"), "t.edn:1: field ':type': column 1: missing");
  EXPECT_EQ(read_error(ok0 + "{:type :done, :f :read, :process 0, :time 2}"),
            "t.edn:2: field ':type': column 8: must be :invoke, :ok, :fail or :info");
  EXPECT_EQ(read_error("{:type :invoke, :f :add, :process 0, :time 1}"),
            "t.edn:1: field ':f': column 20: unsupported client function :add (known: acquire, release, "
            "read, write, cas)");
  EXPECT_EQ(read_error("{:type :invoke, :f :read, :process \"p\", :time 1}"),
            "t.edn:1: field ':process': column 36: must be a non-negative integer or :nemesis");
  EXPECT_EQ(read_error("{:type :invoke, :f :cas, :value 3, :process 0, :time 1}"),
            "t.edn:1: field ':value': column 33: a cas value must be [expected new], found an integer");
  EXPECT_EQ(read_error("[1 2]"), "t.edn:1: field 'edn': column 2: expected an op map, found an integer");
  // The ordering rules are HistoryValidator's, shared with the JSONL reader.
  EXPECT_NE(read_error(ok0 + ok0).find("t.edn:2: field 'type'"), std::string::npos);
  EXPECT_NE(read_error("{:type :ok, :f :read, :process 0, :time 1}").find("has no invoke in flight"),
            std::string::npos);
  EXPECT_NE(read_error(ok0 + "{:type :ok, :f :read, :process 0, :time 0}").find("time goes backwards"),
            std::string::npos);
}

TEST(EdnFixtures, JepsenMutexHistoryThatIsLinearizable) {
  auto r = check_file("mutex_valid.edn");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.stats["model"], "mutex");
}

TEST(EdnFixtures, JepsenMutexHistoryThatIsNot) {
  auto r = check_file("mutex_invalid.edn");
  ASSERT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_EQ(r.violations[0]["op"]["process"], 1);
  EXPECT_EQ(r.violations[0]["op"]["invoke_index"], 3);
  EXPECT_NE(r.summary.find("held by process 0"), std::string::npos) << r.summary;
}

TEST(EdnFixtures, VectorLayoutWithTaggedOpsAndDiscards) {
  auto r = check_file("cas_vector_form.edn");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  EXPECT_EQ(r.stats["model"], "cas-register");
}

TEST(EdnFixtures, IndependentKeysAreCheckedSeparately) {
  auto r = check_file("independent_cas.edn");
  ASSERT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["key"], "2");
  EXPECT_EQ(r.stats["keys"], 2);
}

TEST(EdnHistoryReader, HistoriesWithoutTimeUseLineOrder) {
  const std::string text =
      "{:process 0, :type :invoke, :f :write, :value 1}\n"
      "{:process 0, :type :ok, :f :write, :value 1}\n"
      "{:process 1, :type :invoke, :f :read, :value nil}\n"
      "{:process 1, :type :ok, :f :read, :value nil}\n";
  EdnHistoryReader r(std::make_unique<std::istringstream>(text), "t.edn");
  auto checker = make_linearizable_checker(CheckOptions{});
  std::vector<Event> events;
  for (Event e; r.next(e);) {
    events.push_back(e);
    checker->observe(e);
  }
  EXPECT_EQ(events[3].time, 3);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(checker->finish().verdict, Verdict::kInvalid);  // the read follows the write
  EXPECT_EQ(read_error("{:process 0, :type :invoke, :f :read}\n{:process 0, :type :ok, :f :read, :time 5}"),
            "t.edn:2: field ':time': column 41: present here but absent from the first op");
}

TEST(EdnHistoryReader, MissingFileIsAnInputError) {
  EXPECT_THROW(EdnHistoryReader("/nonexistent/history.edn"), InputError);
}

}  // namespace
}  // namespace fencecheck
