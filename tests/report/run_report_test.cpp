// report.html (report/run_report.h) from small hand-made run directories judged by the
// real checkers: what it shows, that it embeds the data and escapes it, that the run's own
// files are never touched, and the errors for bad input.
#include <gtest/gtest.h>

#include "platform/errors.h"
#include "report/report_data.h"
#include "report/run_report.h"
#include "tests/report/report_fixture.h"

namespace fencecheck::testing {
namespace {

const fs::path kExample = fs::path(FENCECHECK_SOURCE_DIR) / "tests/data/example-run";

// The example run (a paused holder, an unfenced resource) with a config and results.
struct ExampleRun {
  HistoryBuilder tmp;
  fs::path dir = tmp.dir();
  ExampleRun() {
    fs::copy_file(kExample / "history.jsonl", dir / "history.jsonl");
    fs::copy_file(kExample / "resource.jsonl", dir / "resource.jsonl");
    spit(dir / "config.json", test_config().dump(2));
    judge(dir);
  }
};

TEST(RunReport, ShowsTheVerdictsEveryViolationAndEmbedsTheData) {
  ExampleRun run;
  ReportWritten w = write_run_report(run.dir);
  EXPECT_EQ(w.file, run.dir / "report.html");
  EXPECT_EQ(w.events, 20u);
  const std::string html = slurp(w.file);
  EXPECT_EQ(w.bytes, html.size());
  EXPECT_NE(html.find("<body data-verdict=\"invalid\">"), std::string::npos);
  EXPECT_NE(html.find("redis-lock-append-pause-holder-unfenced"), std::string::npos);
  EXPECT_NE(html.find("fencecheck run --backend redis --seed 42"), std::string::npos);
  // Every violation results.json lists is in the list, linked by its number.
  json results = json::parse(slurp(run.dir / "results.json"));
  auto listed = report::violations_of(results);
  ASSERT_GE(listed.size(), 3u);  // exclusion, resource (stale write, lost update), linearizable
  EXPECT_EQ(w.violations, listed.size());
  for (std::size_t k = 0; k < listed.size(); ++k) {
    EXPECT_NE(html.find("<li data-v=\"" + std::to_string(k) + "\""), std::string::npos);
  }
  EXPECT_NE(html.find("process 1 (c1) held l0 from 0.102 s to 2.110 s while process 2 (c2) acquired it at 1.152 s"),
            std::string::npos);
  EXPECT_NE(html.find("the resource accepted a write of k0 with token 1 from c1"), std::string::npos);
  json data = embedded_data(html);
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["ops"].size(), 9u);  // 18 client lines, 2 nemesis lines
  EXPECT_EQ(data["holds"].size(), 2u);
  EXPECT_EQ(data["res"].size(), 5u);
  ASSERT_EQ(data["faults"].size(), 1u);
  EXPECT_EQ(data["faults"][0][3], 106000);     // pause at 106 ms, in µs
  EXPECT_EQ(data["faults"][0][4], 2105999);    // resume
  EXPECT_EQ(data["viol"].size(), listed.size());
}

TEST(RunReport, EachViolationFocusesOnTheOpsItNames) {
  ExampleRun run;
  json data = embedded_data(render_run_report(run.dir));
  bool stale = false, exclusion = false;
  for (const auto& v : data["viol"]) {
    if (v["c"] == "exclusion") {
      exclusion = true;
      EXPECT_EQ(v["p"], json({1, 2}));
      EXPECT_EQ(v["from"], 102000);  // the first hold starts at 102 ms
      EXPECT_EQ(v["to"], 2109999);   // and ends at the release invoke (2.109999999 s)
      EXPECT_TRUE(std::find(v["i"].begin(), v["i"].end(), 6) != v["i"].end()) << v;  // the second acquire's ok
    }
    if (v["c"] == "resource" && v["msg"].get<std::string>().find("accepted a write") != std::string::npos) {
      stale = true;
      EXPECT_EQ(v["s"], json({2, 3}));  // the stale write (seq 3) after token 2's (seq 2)
      // ... with the holds their senders wrote under: c1's (token 1) from 102 ms, c2's (token 2).
      EXPECT_EQ(v["p"], json({1, 2}));
      EXPECT_EQ(v["i"], json({1, 6}));
      EXPECT_EQ(v["from"], 102000);
      EXPECT_EQ(v["to"], 2108000);
    }
    if (v["c"] == "linearizable") {
      EXPECT_TRUE(v.contains("lin"));
    }
  }
  EXPECT_TRUE(stale && exclusion) << data["viol"];
}

// An exclusion violation is a hold and the acquires of others inside it: the list shows
// the hold once, then the first acquires inside it and how many more; the verdict table
// counts holds overlapped and acquires; the focus spans the hold and the acquires shown.
TEST(RunReport, AnExclusionViolationShowsTheHoldAndTheAcquiresInsideIt) {
  HistoryBuilder h;  // p1 holds l0 from 1 ms to 100 ms; p2..p8 take it inside
  h.acquire(1, "l0", 0, 1, 1);
  for (int p = 2; p <= 8; ++p) h.acquire(p, "l0", 10 * p, 10 * p + 1, p).release(p, "l0", 10 * p + 2, 10 * p + 3, p);
  h.release(1, "l0", 100, 101, 1);
  fs::path dir = make_run(h);
  const std::string html = render_run_report(dir);
  EXPECT_NE(html.find("<td>1 hold overlapped by 7 acquires</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("process 1 (c1) held l0 from 0.001 s to 0.100 s while others acquired it 7 times, first process "
                      "2 (c2) at 0.021 s</a><ul class=\"inside\"><li>process 2 (c2) acquired it at 0.021 s, held to "
                      "0.022 s (release), token 2</li>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<li>process 6 (c6) acquired it at 0.061 s, held to 0.062 s (release), token 6</li>"
                      "<li class=\"more\">… and 2 more acquires inside this hold (7 in all)</li></ul></li>"),
            std::string::npos)
      << html;
  EXPECT_EQ(count_of(html, "<span class=\"checker\">exclusion</span>"), 1u) << "one violation, not one per acquire";
  json data = embedded_data(html);
  ASSERT_GE(data["viol"].size(), 1u);
  const json& v = data["viol"][0];
  ASSERT_EQ(v["c"], "exclusion");
  EXPECT_EQ(v["p"], json({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(v["from"], 1000);
  EXPECT_EQ(v["to"], 100000);
}

TEST(RunReport, NothingFromTheHistoryCanCloseTheScriptElement) {
  HistoryBuilder h;
  const std::string evil = "</script><script>alert(1)</script><!--";
  h.acquire(1, evil, 0, 1, 1);
  h.op(2, "invoke", "acquire", evil, nullptr, 2);
  h.raw(json({{"index", 3}, {"time", 3000000}, {"process", 2}, {"type", "fail"}, {"f", "acquire"}, {"key", evil},
              {"value", nullptr}, {"node", "c2"}, {"error", "</SCRIPT> & <b>"}})
            .dump());
  fs::path dir = make_run(h, true, test_config("name </script> & \"quoted\""));
  const std::string html = render_run_report(dir);
  EXPECT_EQ(count_of(html, "</script>"), 2u) << "only the data's and the script's own end tags";
  EXPECT_EQ(count_of(html, "</SCRIPT>"), 0u);
  EXPECT_EQ(count_of(html, "<script>alert"), 0u);
  EXPECT_NE(html.find("name &lt;/script&gt; &amp; &quot;quoted&quot;"), std::string::npos);
  json data = embedded_data(html);
  ASSERT_TRUE(data.is_object());
  bool key = false, error = false;
  for (const auto& s : data["str"]) {
    key = key || s == evil;
    error = error || s == "</SCRIPT> & <b>";
  }
  EXPECT_TRUE(key && error) << "escaped in the page, exact once parsed";
}

TEST(RunReport, IsSelfContained) {
  ExampleRun run;
  const std::string html = render_run_report(run.dir);
  for (const char* outside : {"http://", "https://", "<link", " src=", "@import", "url("}) {
    EXPECT_EQ(html.find(outside), std::string::npos) << outside;
  }
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_NE(html.find("class FcTimeline"), std::string::npos);
}

TEST(RunReport, ShowsFaultWindowsAndLivenessFigures) {
  ExampleRun run;
  const std::string html = render_run_report(run.dir);
  EXPECT_NE(html.find("<section id=\"liveness\">"), std::string::npos);
  EXPECT_NE(html.find("<td>pause-holder</td><td>c1</td><td>0.106 s</td><td>2.106 s</td>"), std::string::npos) << html;
  // After the resume at 2.106 s, c1's write completes ok at 2.109 s: 3 ms to the first ok.
  EXPECT_NE(html.find("3.0 ms"), std::string::npos);
}

TEST(RunReport, NeverWritesTheRunsRecordedFiles) {
  ExampleRun run;
  std::map<std::string, std::string> before;
  for (const char* f : {"history.jsonl", "resource.jsonl", "results.json", "config.json"}) before[f] = slurp(run.dir / f);
  write_run_report(run.dir);
  write_run_report(run.dir);  // and rewriting the report is fine
  for (const auto& [f, text] : before) EXPECT_EQ(slurp(run.dir / f), text) << f;
  ReportOptions onto_results;
  onto_results.out = run.dir / "results.json";
  EXPECT_THROW(write_run_report(run.dir, onto_results), std::invalid_argument);
  EXPECT_EQ(slurp(run.dir / "results.json"), before["results.json"]);
}

TEST(RunReport, AnUnfinishedRunIsReportedWithoutVerdicts) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1).op(1, "invoke", "release", "l0", {{"token", 1}}, 2);
  fs::path dir = make_run(h, false);
  const std::string html = render_run_report(dir);
  EXPECT_NE(html.find("<body data-verdict=\"unfinished\">"), std::string::npos);
  EXPECT_NE(html.find("No verdicts (no results.json)"), std::string::npos);
  EXPECT_EQ(embedded_data(html)["ops"][1][2], 0) << "the release never completed";
}

TEST(RunReport, OtherResultsCanBeShownInsteadOfTheRunsOwn) {
  ExampleRun run;
  HistoryBuilder other;
  spit(fs::path(other.dir()) / "r.json", R"({"valid": true, "checkers": {"exclusion": {"valid": true, "count": 0}}})");
  ReportOptions o;
  o.results = fs::path(other.dir()) / "r.json";
  EXPECT_NE(render_run_report(run.dir, o).find("<body data-verdict=\"valid\">"), std::string::npos);
}

TEST(RunReport, BadInputIsAnInputErrorNamingFileLineAndField) {
  HistoryBuilder tmp;
  EXPECT_THROW(
      {
        try {
          render_run_report(fs::path(tmp.dir()) / "missing");
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("missing:0: not a run directory"), std::string::npos) << e.what();
          throw;
        }
      },
      InputError);
  EXPECT_THROW(render_run_report(tmp.dir()), InputError);  // a directory without history.jsonl

  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1);
  h.raw(R"({"index":2,"time":5,"process":1,"type":"bogus","f":"release","key":"l0","value":{"token":1}})");
  fs::path dir = make_run(h, false);
  try {
    render_run_report(dir);
    FAIL() << "a malformed history must not make a report";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_EQ(e.field(), "type");
    EXPECT_NE(std::string(e.what()).find("history.jsonl:3: field 'type'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "report.html"));

  HistoryBuilder c;
  c.acquire(1, "l0", 0, 1, 1);
  fs::path cdir = make_run(c, false, {{"name", 7}});
  try {
    render_run_report(cdir);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "name");
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace fencecheck::testing

namespace fencecheck::testing {
namespace {

// A run under a runtime that could not inject every fault says which, and why, in its
// header; a malformed list is an error naming the field.
TEST(RunReport, NamesTheFaultsItsRuntimeCouldNotInject) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1);
  json config = test_config();
  config["runtime"] = "external";
  config["unavailable_faults"] = {{"kill-server", "acts on the servers, which the external runtime does not run"},
                                  {"pause-server", "acts on the servers, which the external runtime does not run"}};
  const std::string html = render_run_report(make_run(h, true, config));
  EXPECT_NE(html.find("kill-server, pause-server: acts on the servers, which the external runtime does not run"),
            std::string::npos);
  EXPECT_NE(html.find("<span>runtime</span><b>external</b>"), std::string::npos);

  HistoryBuilder bad;
  bad.acquire(1, "l0", 0, 1, 1);
  config["unavailable_faults"] = {{"kill-server", 3}};
  try {
    render_run_report(make_run(bad, false, config));
    FAIL() << "a number as a reason was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "unavailable_faults.kill-server");
  }
}

}  // namespace
}  // namespace fencecheck::testing
