// JUnit XML (report/junit.h): counts, escaping, and validity against the common JUnit
// schema (tests/report/junit-10.xsd) with xmllint.
#include <gtest/gtest.h>

#include "report/junit.h"
#include "tests/report/report_fixture.h"
#include "tests/support/command.h"

namespace fencecheck::testing {
namespace {

const std::string kXsd = std::string(FENCECHECK_SOURCE_DIR) + "/tests/report/junit-10.xsd";

json checker(json valid, std::uint64_t count, json violations, const std::string& summary) {
  return {{"valid", valid}, {"count", count}, {"shown", violations.size()}, {"violations", violations},
          {"summary", summary}};
}

json mixed_results() {
  return {{"valid", false},
          {"checkers",
           {{"exclusion", checker(false, 3, {{{"message", "p1 held l0 while p2 acquired it"}}, {{"message", "second"}}},
                                  "p1 held l0 while p2 acquired it")},
            {"tokens", checker("skipped", 0, json::array(), "no tokens")},
            {"linearizable", checker("unknown", 0, json::array(), "out of time after 60 s")},
            {"resource", checker(true, 0, json::array(), "fine")}}},
          {"unknown_reasons", json::array()},
          {"run", {{"test_seconds", 8.5}}},
          {"check_seconds", 0.25}};
}

std::string attr_of(const std::string& xml, const std::string& element, const std::string& attr) {
  const std::string open = "<" + element;
  auto at = xml.find(open);
  if (at == std::string::npos) return "";
  auto a = xml.find(attr + "=\"", at);
  if (a == std::string::npos) return "";
  a += attr.size() + 2;
  return xml.substr(a, xml.find('"', a) - a);
}

// xmllint's verdict on `xml` against the schema: exit code and output.
CommandResult validate(const std::string& xml) {
  HistoryBuilder tmp;
  const std::string file = tmp.dir() + "/junit.xml";
  spit(file, xml);
  return run_command("xmllint --noout --schema " + kXsd + " " + file);
}

TEST(Junit, OneTestcasePerCheckerAndOneForTheRunWithCountsPerVerdict) {
  JunitRun run{"K1.20261201T220213.402Z", "/tmp/run", mixed_results(), "", false, {}};
  const std::string xml = junit_xml({{"K1", {run}}});
  EXPECT_EQ(attr_of(xml, "testsuite ", "tests"), "5");
  EXPECT_EQ(attr_of(xml, "testsuite ", "failures"), "1");
  EXPECT_EQ(attr_of(xml, "testsuite ", "errors"), "1");
  EXPECT_EQ(attr_of(xml, "testsuite ", "skipped"), "1");
  EXPECT_EQ(attr_of(xml, "testsuite ", "time"), "8.750");
  EXPECT_EQ(attr_of(xml, "failure", "message"), "p1 held l0 while p2 acquired it");
  EXPECT_EQ(attr_of(xml, "error", "message"), "out of time after 60 s");
  EXPECT_EQ(attr_of(xml, "skipped", "message"), "no tokens");
  EXPECT_NE(xml.find("3 violations\n- p1 held l0 while p2 acquired it\n- second"), std::string::npos) << xml;
  EXPECT_EQ(count_of(xml, "classname=\"K1.20261201T220213.402Z\""), 5u);
}

// A scenario run passes when its prediction holds, even with a violation (K1 predicts
// one), and fails with the misses when it does not; the schema still holds.
TEST(Junit, AScenarioRunIsJudgedByItsPredictionNotByItsCheckers) {
  JunitRun held{"K1.a", "", mixed_results(), "", true, {}};
  JunitRun missed{"K1.b", "", mixed_results(), "", true, {"resource: expected invalid, got valid"}};
  const std::string xml = junit_xml({{"K1", {held, missed}}});
  EXPECT_EQ(attr_of(xml, "testsuite ", "tests"), "4") << "prediction + run, per run";
  EXPECT_EQ(attr_of(xml, "testsuite ", "failures"), "1");
  EXPECT_EQ(attr_of(xml, "failure", "message"), "resource: expected invalid, got valid");
  EXPECT_EQ(count_of(xml, "name=\"prediction\""), 2u);
  EXPECT_NE(xml.find("exclusion: invalid"), std::string::npos) << "the observed verdicts are shown\n" << xml;
  auto v = validate(xml);
  EXPECT_EQ(v.code, 0) << v.out << xml;
}

TEST(Junit, AnUndecidedRunIsAnErrorEvenWhenEveryCheckerIsValid) {
  json r = {{"valid", "unknown"},
            {"checkers", {{"exclusion", checker(true, 0, json::array(), "ok")}}},
            {"unknown_reasons", {"worker c2 died", "interrupted"}}};
  const std::string xml = junit_xml({{"s", {{"r", "", r, "", false, {}}}}});
  EXPECT_EQ(attr_of(xml, "testsuite ", "errors"), "1");
  EXPECT_EQ(attr_of(xml, "error", "message"), "worker c2 died; interrupted");
}

TEST(Junit, EscapesEverythingFromTheResults) {
  json r = mixed_results();
  r["checkers"]["exclusion"]["violations"][0]["message"] = "a <b> & \"c\" 'd' \x01 ]]>";
  const std::string xml = junit_xml({{"suite <&>", {{"run \"1\"", "", r, "", false, {}}}}});
  EXPECT_NE(xml.find("message=\"a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#39; \xEF\xBF\xBD ]]&gt;\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"suite &lt;&amp;&gt;\""), std::string::npos);
  FC_REQUIRE_TOOL("xmllint", "libxml2-utils");
  auto v = validate(xml);
  EXPECT_EQ(v.code, 0) << v.out << xml;
}

TEST(Junit, ValidatesAgainstTheJunitSchemaForEveryKindOfRun) {
  FC_REQUIRE_TOOL("xmllint", "libxml2-utils");
  HistoryBuilder h;  // the article's failure, judged by the real checkers
  h.acquire(1, "l0", 0, 1, 1).acquire(2, "l0", 2, 3, 2).release(2, "l0", 4, 5, 2).release(1, "l0", 6, 7, 1);
  fs::path judged = make_run(h);
  HistoryBuilder u;
  u.acquire(1, "l0", 0, 1, 1);
  fs::path unfinished = make_run(u, false);
  HistoryBuilder bad;
  bad.acquire(1, "l0", 0, 1, 1);
  fs::path unreadable = make_run(bad, false);
  spit(unreadable / "results.json", "{\"valid\": ");
  JunitSuite scenario{"K1: a paused holder", {junit_run(judged), junit_run(unfinished), junit_run(unreadable)}};
  JunitSuite single{"one run", {junit_run(judged)}};
  const std::string xml = junit_xml({scenario, single});
  auto v = validate(xml);
  EXPECT_EQ(v.code, 0) << v.out << xml;
  EXPECT_NE(xml.find("unfinished: "), std::string::npos) << xml;
  EXPECT_NE(xml.find("unreadable: " + (unreadable / "results.json").string() + ":1: not valid JSON"), std::string::npos) << xml;
  EXPECT_EQ(count_of(xml, "<testsuite "), 2u);
  EXPECT_GE(count_of(xml, "<failure "), 2u);  // exclusion (and linearizable) in both suites
}

// A paused holder's lock taken three times, twice: the exclusion failure counts the two
// holds overlapped and the acquires inside them, and lists each hold once.
HistoryBuilder two_overlapped_holds() {
  HistoryBuilder h;
  for (int g = 0; g < 2; ++g) {
    const double t = 100.0 * g;
    h.acquire(1 + 10 * g, "l0", t, t + 1);
    for (int i = 1; i <= 3; ++i) h.acquire(1 + 10 * g + i, "l0", t + 10 * i, t + 10 * i + 1).release(1 + 10 * g + i, "l0", t + 10 * i + 2, t + 10 * i + 3);
    h.release(1 + 10 * g, "l0", t + 50, t + 51);
  }
  return h;
}

TEST(Junit, AnExclusionFailureCountsHoldsOverlappedAndListsEachOnce) {
  HistoryBuilder h = two_overlapped_holds();
  const std::string xml = junit_xml({{"s", {junit_run(make_run(h))}}});
  EXPECT_NE(xml.find(">2 holds overlapped by 6 acquires\n- process 1 (c1) held l0 from 0.001 s to 0.050 s while others "
                     "acquired it 3 times, first process 2 (c2) at 0.011 s\n- process 11 (c11) held l0 from 0.101 s"),
            std::string::npos)
      << xml;
  EXPECT_EQ(count_of(xml, "\n- process"), 2u) << xml;
}

TEST(Junit, WriteJunitWritesTheDocument) {
  HistoryBuilder tmp;
  const fs::path file = fs::path(tmp.dir()) / "out.xml";
  write_junit(file, {{"s", {{"r", "", mixed_results(), "", false, {}}}}});
  EXPECT_EQ(slurp(file).rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_THROW(write_junit(fs::path(tmp.dir()) / "no/such/dir/out.xml", {}), std::exception);
}

}  // namespace
}  // namespace fencecheck::testing
