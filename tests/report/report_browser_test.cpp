// report.html in a real browser (label `integration`): a real run of the default test (a
// paused holder, an unfenced resource: it finds violations) reported and loaded in headless
// Chromium, whose DOM must show that the script drew the timeline and linked every listed
// violation; and a synthetic 100k-event run that must render within a few seconds.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "report/run_report.h"
#include "tests/integration/run_fixture.h"
#include "tests/report/browser.h"
#include "tests/report/report_fixture.h"

namespace fencecheck::testing {
namespace {

// Checks that the script ran and drew; returns the number of violations it linked.
int expect_rendered(const BrowserResult& b) {
  EXPECT_EQ(b.code, 0) << b.log;
  EXPECT_EQ(dom_attr(b.dom, "data-render-error"), "") << "the script failed";
  EXPECT_EQ(dom_attr(b.dom, "data-rendered"), "1") << b.dom.substr(0, 2000) << b.log;
  EXPECT_EQ(dom_attr(b.dom, "data-drawn"), "1") << "the timeline canvas was not drawn";
  const std::string linked = dom_attr(b.dom, "data-js-violations");
  return linked.empty() ? -1 : std::stoi(linked);
}

class ReportInBrowser : public RunTest {
 protected:
  void SetUp() override {
    FC_REQUIRE_TOOL("chromium", "chromium");
    RunTest::SetUp();
  }
};

TEST_F(ReportInBrowser, ARealRunsReportDrawsItsTimelineAndLinksItsViolations) {
  auto r = run("--time-limit 8 --seed 3 --nemesis pause-holder --ttl-ms 500 --pause-ms 1500 "
               "--nemesis-interval 1000 --hold-ms 200");
  ASSERT_EQ(r.code, 1) << "the unfenced default test finds violations\n" << r.out;
  const fs::path dir = latest();
  auto rep = run_command(std::string(FENCECHECK_BIN) + " report " + dir.string());
  ASSERT_EQ(rep.code, 0) << rep.out;
  std::printf("[ report ] %s", rep.out.c_str());
  BrowserResult b = load_in_chromium(dir / "report.html");
  const int linked = expect_rendered(b);
  const std::size_t listed = count_of(b.dom, "<li data-v=\"");
  EXPECT_GT(listed, 0u);
  EXPECT_EQ(linked, static_cast<int>(listed));
  EXPECT_NE(b.dom.find("pause-holder"), std::string::npos);
  EXPECT_GT(std::stoi(dom_attr(b.dom, "data-lanes")), 0);
  std::printf("[ chromium ] %zu violations linked, script %s ms, browser %.2f s\n", listed,
              dom_attr(b.dom, "data-render-ms").c_str(), b.seconds);

  // Hovering over an op names it with its times, indices and value; the lanes can be per node.
  std::string probe = slurp(dir / "report.html");
  probe.insert(probe.rfind("</body>"), R"(<script>
    const tl = window.fcTimeline, lane = tl.lanes[0], o = tl.D.ops[lane.ops[0]];
    tl.setView(o[3] - 1000, (o[4] < 0 ? tl.D.end : o[4]) + 1000);
    document.body.dataset.hover = tl.describe(tl.x(o[3]) + 1, tl.top + tl.LANE / 2);
    document.getElementById('tl-mode').click();
    document.body.dataset.modeLanes = tl.mode + ' ' + tl.lanes.length;
  </script>)");
  spit(dir / "probe.html", probe);
  BrowserResult hover = load_in_chromium(dir / "probe.html");
  const std::string text = dom_attr(hover.dom, "data-hover");
  EXPECT_NE(text.find("(process "), std::string::npos) << text << hover.log;
  EXPECT_NE(text.find("invoke "), std::string::npos) << text;
  EXPECT_NE(text.find("value "), std::string::npos) << text;
  EXPECT_EQ(dom_attr(hover.dom, "data-mode-lanes"), "node 5") << "five client nodes";

  // report.html#v0 opens on the first violation, as a click on it does.
  BrowserResult focused = load_in_chromium(dir / "report.html", "#v0");
  expect_rendered(focused);
  EXPECT_NE(focused.dom.find("<li data-v=\"0\" id=\"v-0\" class=\"active\">"), std::string::npos);
  EXPECT_NE(focused.dom.find(" violation 1: "), std::string::npos) << "the status names the violation shown";
}

// A lock-append run of `cycles` rounds: the holder acquires, reads, writes and releases
// while the others' acquires fail; a pause every 500 rounds; one overlapping holder in the
// middle so that there are violations to link. 16 events per round.
fs::path write_synthetic_run(const fs::path& dir, int cycles) {
  fs::create_directories(dir);
  std::ofstream h(dir / "history.jsonl"), res(dir / "resource.jsonl");
  std::uint64_t index = 0, seq = 0;
  std::int64_t t = 1'000'000;
  auto line = [&](json process, const char* type, const char* f, const char* key, json value) {
    json j = {{"index", index++}, {"time", t}, {"process", process}, {"type", type}, {"f", f}, {"value", value}};
    if (key != nullptr) j["key"] = key;
    if (process.is_number()) j["node"] = "c" + std::to_string(process.get<int>() + 1);
    h << j.dump() << "\n";
    t += 50'000;
  };
  auto resource = [&](const char* op, int token, json value, int p) {
    res << json({{"seq", seq++}, {"time", t}, {"key", "k0"}, {"op", op}, {"token", token}, {"value", value},
                 {"accepted", true}, {"reason", ""}, {"client", "c" + std::to_string(p + 1)}})
               .dump()
        << "\n";
  };
  json list = json::array();
  for (int c = 0; c < cycles; ++c) {
    const int p = c % 5, token = c + 1;
    if (c % 500 == 250) line("nemesis", "info", "pause", nullptr, {{"fault", "pause-client"}, {"targets", {"c9"}}});
    if (c % 500 == 400) line("nemesis", "info", "resume", nullptr, {{"fault", "pause-client"}, {"targets", {"c9"}}});
    line(p, "invoke", "acquire", "l0", nullptr);
    line(p, "ok", "acquire", "l0", {{"token", token}});
    for (int q = 0; q < 5; ++q) {
      if (q == p) continue;
      line(q, "invoke", "acquire", "l0", nullptr);
      line(q, "fail", "acquire", "l0", nullptr);
    }
    if (c == cycles / 2) {  // a second holder while p holds: exclusion breaks
      line(7, "invoke", "acquire", "l0", nullptr);
      line(7, "ok", "acquire", "l0", {{"token", token}});
    }
    line(p, "invoke", "read", "k0", nullptr);
    resource("read", token, list, p);
    line(p, "ok", "read", "k0", list);
    json next = list;
    next.push_back(c);
    if (next.size() > 20) next.erase(next.begin());  // keep lines short; the list is not judged here
    line(p, "invoke", "write", "k0", {{"token", token}, {"value", next}});
    resource("write", token, next, p);
    line(p, "ok", "write", "k0", {{"token", token}, {"value", next}});
    list = next;
    line(p, "invoke", "release", "l0", {{"token", token}});
    line(p, "ok", "release", "l0", {{"token", token}});
  }
  spit(dir / "config.json", test_config("synthetic-100k").dump());
  return dir;
}

TEST(ReportInBrowserLarge, AHundredThousandEventReportRendersInAFewSeconds) {
  FC_REQUIRE_TOOL("chromium", "chromium");
  HistoryBuilder tmp;
  const fs::path dir = write_synthetic_run(fs::path(tmp.dir()) / "run", 6500);
  judge(dir);
  ReportWritten w = write_run_report(dir);
  ASSERT_GE(w.events, 100000u);
  ASSERT_GT(w.violations, 0u);
  std::printf("[ report ] %llu events -> %s: %.2f MB in %.2f s\n", static_cast<unsigned long long>(w.events),
              w.file.c_str(), static_cast<double>(w.bytes) / 1e6, w.seconds);
  BrowserResult b = load_in_chromium(w.file);
  const int linked = expect_rendered(b);
  EXPECT_EQ(linked, static_cast<int>(w.violations));
  const double script_ms = std::stod(dom_attr(b.dom, "data-render-ms").empty() ? "1e9" : dom_attr(b.dom, "data-render-ms"));
  std::printf("[ chromium ] %llu events: script parsed and drew in %.0f ms; browser start to DOM dump %.2f s\n",
              static_cast<unsigned long long>(w.events), script_ms, b.seconds);
  EXPECT_LT(script_ms, 5000.0);
  EXPECT_LT(b.seconds, 60.0) << "loading the page (browser start included) took too long";
}

// A lost notice (a lock library telling its process) is drawn on its process's lane, and a
// violation after it says the library spoke too late.
TEST(ReportInBrowserNotices, ALostNoticeIsDrawnAndTheViolationSaysTheLibrarySpoke) {
  FC_REQUIRE_TOOL("chromium", "chromium");
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).acquire(2, "l0", 2, 5).lost(1, "l0", 40).release(2, "l0", 50, 51);
  const fs::path dir = make_run(h);
  ReportWritten w = write_run_report(dir);
  ASSERT_EQ(w.violations, 2u) << "exclusion's, and the linearizable checker's (a notice is no release)";
  std::string probe = slurp(w.file);
  probe.insert(probe.rfind("</body>"), R"(<script>
    const tl = window.fcTimeline;
    document.body.dataset.notices = String(tl.lanes.reduce((n, l) => n + l.notices.length, 0));
  </script>)");
  spit(dir / "probe.html", probe);
  BrowserResult b = load_in_chromium(dir / "probe.html");
  EXPECT_EQ(expect_rendered(b), 2);
  EXPECT_EQ(dom_attr(b.dom, "data-notices"), "1") << b.log;
  EXPECT_NE(b.dom.find("the library said lost at 0.040 s"), std::string::npos);
}

// Blame on the report: K4's shape (Redlock's acquire stalled past its validity: a grant
// already over when given, inside another's hold), each violation's class and "told" in
// the list, and the overlapped hold's promised end drawn on its lane once focused.
TEST(ReportInBrowserBlame, EachViolationShowsItsClassAndTheTimelineItsPromisedEnd) {
  FC_REQUIRE_TOOL("chromium", "chromium");
  HistoryBuilder h;
  h.op(2, "invoke", "acquire", "l0", nullptr, 0);
  h.op(1, "invoke", "acquire", "l0", nullptr, 100);
  h.op(1, "ok", "acquire", "l0", {{"token", nullptr}, {"valid_ms", 900}}, 110);
  h.op(2, "ok", "acquire", "l0", {{"token", nullptr}, {"valid_ms", 980}}, 1200);  // stalled 1.2 leases
  h.release(1, "l0", 1300, 1301).release(2, "l0", 1500, 1501);
  h.op(3, "invoke", "acquire", "l0", nullptr, 1600);
  h.op(3, "ok", "acquire", "l0", {{"token", nullptr}, {"valid_ms", 500}}, 1610);
  h.op(4, "invoke", "acquire", "l0", nullptr, 2200);
  h.op(4, "ok", "acquire", "l0", {{"token", nullptr}, {"valid_ms", 500}}, 2210);  // 3 paused past its lease
  h.release(3, "l0", 2400, 2401).release(4, "l0", 2500, 2501);
  const fs::path dir = make_run(h);
  ReportWritten w = write_run_report(dir);
  std::string probe = slurp(w.file);
  probe.insert(probe.rfind("</body>"), R"(<script>
    const tl = window.fcTimeline, viol = tl.D.viol.filter(v => v.b);
    document.body.dataset.classes = viol.map(v => v.b.cls).join(',');
    tl.focus(viol[1]);
    document.body.dataset.promisedEnd = tl.c.dataset.promisedEnd || 'not drawn';
  </script>)");
  spit(dir / "probe.html", probe);
  BrowserResult b = load_in_chromium(dir / "probe.html");
  expect_rendered(b);
  EXPECT_EQ(dom_attr(b.dom, "data-classes"), "granted-expired,overstayed") << b.log;
  EXPECT_EQ(dom_attr(b.dom, "data-promised-end"), "2100000") << "process 3's invoke (1.6 s) + 500 ms, in µs";
  EXPECT_NE(b.dom.find("data-blame=\"granted-expired\">granted-expired · told never"), std::string::npos);
  EXPECT_NE(b.dom.find("data-blame=\"overstayed\">overstayed · told never"), std::string::npos);
  EXPECT_NE(b.dom.find("overstayed: its promise ended at 2.100 s, 0.110 s before the later grant"), std::string::npos);
}

}  // namespace
}  // namespace fencecheck::testing
