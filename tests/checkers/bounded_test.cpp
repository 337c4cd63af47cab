// Every value a checker prints is bounded, however large the value in the history.
#include "checkers/bounded.h"

#include <gtest/gtest.h>

#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

std::string list_text(std::size_t n) {
  std::string s = "[";
  for (std::size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(i);
  return s + "]";
}

TEST(Bounded, ShortValuesPassUnchanged) {
  EXPECT_EQ(bounded_text(R"({"a":[1,2,3]})"), R"({"a":[1,2,3]})");
  EXPECT_EQ(bounded_json(R"({"a":[1,2]})"), json({{"a", {1, 2}}}));
  EXPECT_EQ(bounded_json("not json"), json("not json"));
}

TEST(Bounded, LongArraysShowTheirEndsAndSize) {
  EXPECT_EQ(bounded_text(list_text(100000)),
            "[0, 1, 2, 3, 4, 5, 6, 7, … 99991 more …, 99999] (100000 items)");
  std::string tight = bounded_text(list_text(1000), 40);
  EXPECT_LE(tight.size(), 60u) << tight;
  EXPECT_NE(tight.find("(1000 items)"), std::string::npos) << tight;
  EXPECT_NE(tight.find(", 999]"), std::string::npos) << tight;
}

TEST(Bounded, LongStringsAreCutWithTheirLength) {
  std::string s = "\"" + std::string(5000, 'x') + "\"";
  std::string b = bounded_text(s);
  EXPECT_LE(b.size(), 200u) << b;
  EXPECT_EQ(b.substr(0, 4), "\"xxx");
  EXPECT_NE(b.find("…\" (5000 chars)"), std::string::npos) << b;
  // A cut never splits a UTF-8 sequence.
  std::string accents;
  for (int i = 0; i < 500; ++i) accents += "\xc3\xa9";
  std::string cut = bounded_text("\"" + accents + "\"", 50);
  EXPECT_NO_THROW(json(cut).dump()) << cut;  // dump() throws on broken UTF-8
  EXPECT_NE(cut.find("(500 chars)"), std::string::npos) << cut;
}

TEST(Bounded, DeepAndWideObjectsAreCut) {
  std::string deep = "1";
  for (int i = 0; i < 100; ++i) deep = R"({"level":)" + deep + "}";
  std::string b = bounded_text(deep, 60);
  EXPECT_LE(b.size(), 70u) << b;
  EXPECT_NE(b.find("{… 1 key}"), std::string::npos) << b;
  std::string wide = "{";
  for (int i = 0; i < 1000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  wide += "}";
  std::string w = bounded_text(wide);
  EXPECT_LE(w.size(), 200u) << w;
  EXPECT_NE(w.find("more keys} (1000 keys)"), std::string::npos) << w;
}

TEST(Bounded, NotJsonIsCutToo) {
  std::string b = bounded_text(std::string(1000, 'z'));
  EXPECT_LE(b.size(), 220u);
  EXPECT_NE(b.find("… (1000 chars)"), std::string::npos) << b;
}

TEST(Bounded, LongValuesInViolationsAreMarkedAbbreviated) {
  std::string text = list_text(5000);
  json j = bounded_json(text);
  EXPECT_EQ(j["chars"], text.size());
  EXPECT_EQ(j["abbreviated"], bounded_text(text));
}

TEST(Bounded, AHugeListStaysOutOfSummariesAndResults) {
  constexpr std::size_t kItems = 2'000'000;  // about 15 MB of JSON
  const std::string list = list_text(kItems);
  HistoryBuilder h;  // a write appends the huge list as its element; the final read lost it
  const std::string write = R"({"token":null,"value":[)" + list + "]}";
  h.raw(R"({"index":0,"time":0,"process":1,"type":"invoke","f":"write","key":"k0","value":)" + write + "}");
  h.raw(R"({"index":1,"time":1000,"process":1,"type":"ok","f":"write","key":"k0","value":)" + write + "}");
  h.raw(R"({"index":2,"time":2000,"process":2,"type":"invoke","f":"read","key":"k0","value":null})");
  h.raw(R"({"index":3,"time":3000,"process":2,"type":"ok","f":"read","key":"k0","value":[]})");
  CheckRequest req;
  req.history = h.history_path();
  req.checkers = {"resource", "linearizable"};
  CheckReport report = run_checks(req);
  ASSERT_EQ(report.overall(), Verdict::kInvalid) << report.summary().substr(0, 2000);
  for (const auto& [name, r] : report.results) EXPECT_EQ(r.verdict, Verdict::kInvalid) << name;
  std::string summary = report.summary();
  EXPECT_LT(summary.size(), 4000u) << summary.substr(0, 4000);
  EXPECT_NE(summary.find("(2000000 items)"), std::string::npos) << summary;
  std::string results = report.to_json(req).dump();
  EXPECT_LT(results.size(), 40000u) << results.substr(0, 4000);
}

}  // namespace
}  // namespace fencecheck::testing
