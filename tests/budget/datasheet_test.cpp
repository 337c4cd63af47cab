// The datasheet's judgements and pages (harness/budget/datasheet.h, datasheet_render.h,
// budget_report.h) from made-up budget documents: the promise sentence for each outcome,
// the token verdict, the notice summary, the comparison table, the rate plot.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/budget/budget_report.h"
#include "harness/budget/datasheet.h"
#include "harness/budget/datasheet_render.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json try_of(std::int64_t x, json checkers, json notice = nullptr, json latencies = json::array()) {
  json d = {{"checkers", checkers}, {"notice_latencies_ms", latencies}};
  if (!notice.is_null()) d["notice"] = notice;
  return {{"result", "safe"}, {"detail", d}, {"magnitude", x}};
}

json budget(const std::string& outcome, json safe_at, json broken_at, const std::string& breaks = "above",
            json probes = json::array()) {
  return {{"magnitude", "pause"},
          {"breaks", breaks},
          {"search", {{"outcome", outcome}, {"safe_at", safe_at}, {"broken_at", broken_at},
                      {"options", {{"lo", 0}, {"hi", 3000}}}, {"summary", "s"}, {"probes", probes}}}};
}

TEST(MeasuredSentence, SaysKeptBrokenOrKeptOnlyBelowTheBoundary) {
  EXPECT_EQ(measured_sentence(budget("safe-everywhere", nullptr, nullptr)), "kept at every pause probed, up to 3000 ms");
  EXPECT_EQ(measured_sentence(budget("broken-everywhere", nullptr, 0)), "broken at every pause probed");
  EXPECT_EQ(measured_sentence(budget("safe-everywhere", 0, nullptr, "below")), "kept at every pause probed, down to 0 ms");
  EXPECT_EQ(measured_sentence(budget("boundary", 900, 1000)), "kept only below 1000 ms of pause (kept at 900 ms)");
  EXPECT_EQ(measured_sentence(budget("boundary", 1000, 900, "below")),
            "kept only with a pause of at least 1000 ms (broken at 900 ms)");
  EXPECT_EQ(measured_sentence(budget("undecided", nullptr, nullptr)), "s") << "the search's own summary says why";
}

TEST(TokenVerdict, NoneIncreasingAndWhetherItSurvivesEveryServersCrash) {
  const json plain_ok = {{"checkers", {{"tokens", {{"valid", true}, {"with_token", 40}}}}}};
  const json plain_none = {{"checkers", {{"tokens", {{"valid", true}, {"with_token", 0}}}}}};
  const json plain_bad = {{"checkers", {{"tokens", {{"valid", false}, {"with_token", 40}}}}}};
  const json probes = json::array({{{"magnitude", 0},
                                    {"tries", json::array({try_of(0, {{"tokens", false}}), try_of(0, {{"tokens", true}})})}}});
  const json kill = budget("boundary", 900, 0, "below", probes);
  EXPECT_EQ(token_verdict(plain_ok, kill)["kind"], "unique and increasing");
  EXPECT_EQ(token_verdict(plain_ok, kill)["after_every_server_crashed"], "went backwards in 1 of 2 runs");
  EXPECT_EQ(token_verdict(plain_ok, nullptr)["after_every_server_crashed"], "not probed");
  EXPECT_EQ(token_verdict(plain_none, kill)["kind"], "none");
  EXPECT_EQ(token_verdict(plain_bad, kill)["kind"], "not unique or not increasing");
  EXPECT_EQ(token_verdict(nullptr, kill)["kind"], "not probed");
  const json kept = budget("safe-everywhere", 0, nullptr, "below",
                           json::array({{{"magnitude", 0}, {"tries", json::array({try_of(0, {{"tokens", true}})})}}}));
  EXPECT_EQ(token_verdict(plain_ok, kept)["after_every_server_crashed"], "kept increasing in 1 runs");
}

TEST(NoticeSummary, CountsToldAndSilentAndTheLatencies) {
  const json probes = json::array(
      {{{"magnitude", 100},
        {"tries", json::array({try_of(100, json::object(), {{"told", 2}, {"silent", 1}}, {30.0, 10.0}),
                               try_of(100, json::object(), {{"told", 1}, {"silent", 0}}, {20.0})})}}});
  const json n = notice_summary({budget("boundary", 0, 100, "above", probes)});
  EXPECT_EQ(n["told"], 3);
  EXPECT_EQ(n["silent"], 1);
  EXPECT_EQ(n["latency_ms"]["median"], 20.0);
  EXPECT_EQ(n["latency_ms"]["max"], 30.0);
  EXPECT_FALSE(notice_summary({}).contains("latency_ms"));
}

TEST(Comparison, OneRowPerSheetOneColumnPerFaultAndTheNewestSheetOfEach) {
  const fs::path root = fs::temp_directory_path() / ("fc-datasheet-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto sheet = [&](const std::string& backend, const std::string& stamp, json faults) {
    fs::create_directories(root / (backend + "-native") / stamp);
    std::ofstream(root / (backend + "-native") / stamp / "datasheet.json")
        << json{{"backend", backend}, {"client", "native"}, {"lease_ms", 1000}, {"faults", faults}}.dump();
  };
  json boundary = {{"fault", "pause-holder"},
                   {"budget", {{"outcome", "boundary"}, {"safe_at", 900}, {"broken_at", 1000}, {"options", {{"hi", 3000}}}}}};
  sheet("redis", "2026-12-01T00:00:00Z", json::array({{{"fault", "pause-holder"}, {"refused", "old"}}}));
  sheet("redis", "2026-12-02T00:00:00Z", json::array({boundary}));
  sheet("etcd", "2026-12-02T00:00:00Z", json::array({{{"fault", "kill-server"}, {"refused", "no"}}}));
  std::ofstream(root / "etcd-native" / "2026-12-02T00:00:00Z" / "junk.txt") << "x";
  const auto sheets = find_datasheets(root);
  ASSERT_EQ(sheets.size(), 2u);
  EXPECT_EQ(sheets[0]["backend"], "etcd") << "sorted by backend";
  EXPECT_EQ(budget_cell(sheets[1]["faults"][0]), "900–1000 ms") << "the newest redis sheet";
  const std::string md = comparison_markdown(sheets, "heading");
  EXPECT_NE(md.find("| pause-holder | kill-server |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 900–1000 ms | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("| — | refused |"), std::string::npos) << md;
  write_comparison(root, sheets, "heading");
  EXPECT_TRUE(fs::exists(root / "datasheets.html"));
  fs::remove_all(root);
}

TEST(RatePlot, DrawsEveryProbeTheBracketAndTheLease) {
  BudgetResult r;
  r.options.lo = 0;
  r.options.hi = 3000;
  r.safe_at = 900;
  r.broken_at = 1000;
  Probe safe{.magnitude = 900, .tries = {{ProbeTry::Result::kSafe, 1, {}}}, .verdict = Probe::Verdict::kSafe};
  Probe broken{.magnitude = 1000, .tries = {{ProbeTry::Result::kBroke, 1, {}}}, .verdict = Probe::Verdict::kBroken};
  r.probes = {safe, broken};
  const std::string svg = rate_plot_svg(r, "pause", 1000);
  EXPECT_NE(svg.find("class=\"probe safe\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"probe broken\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"bracket\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"lease\""), std::string::npos);
  EXPECT_NE(svg.find("1000 ms: 1/1 tries broke"), std::string::npos);
}

}  // namespace
}  // namespace fencecheck

namespace fencecheck {
namespace {

TEST(BudgetCell, SaysTheBracketLowEndFirstWhateverSideBreaks) {
  auto row = [](json b) { return json{{"fault", "kill-server"}, {"budget", b}}; };
  const json opts = {{"lo", 0}, {"hi", 3000}};
  EXPECT_EQ(budget_cell(row({{"outcome", "boundary"}, {"safe_at", 1000}, {"broken_at", 900}, {"options", opts}})),
            "900–1000 ms");
  EXPECT_EQ(budget_cell(row({{"outcome", "boundary"}, {"safe_at", 0}, {"broken_at", 2000}, {"options", opts},
                             {"budget_exhausted", true}})),
            "0–2000 ms (budget spent)");
  EXPECT_EQ(budget_cell(row({{"outcome", "safe-everywhere"}, {"options", opts}})), "kept to 3000 ms");
  EXPECT_EQ(budget_cell(row({{"outcome", "broken-everywhere"}, {"options", opts}})), "broken from 0 ms");
  EXPECT_EQ(budget_cell(row({{"outcome", "undecided"}, {"options", opts}})), "undecided");
  const json below = {{"lo", 0}, {"hi", 2000}, {"breaks", "below"}};
  EXPECT_EQ(budget_cell(row({{"outcome", "safe-everywhere"}, {"options", below}})), "kept down to 0 ms");
  EXPECT_EQ(budget_cell(row({{"outcome", "broken-everywhere"}, {"options", below}})), "broken up to 2000 ms");
  EXPECT_EQ(budget_cell({{"fault", "x"}, {"refused", "why"}}), "refused");
}

}  // namespace
}  // namespace fencecheck

namespace fencecheck {
namespace {

TEST(DatasheetPage, SaysEveryLineOfTheSheet) {
  const json sheet = {{"backend", "zookeeper"},
                      {"client", "curator"},
                      {"profile", "quick"},
                      {"lease_ms", 3000},
                      {"promise", "no two clients think they hold the same lock"},
                      {"token", {{"kind", "unique and increasing"}, {"after_every_server_crashed", "kept increasing in 3 runs"}}},
                      {"notice", {{"told", 2}, {"silent", 1}, {"latency_ms", {{"median", 20.0}, {"p90", 30.0}, {"max", 30.0}}}}},
                      {"faults", json::array({{{"fault", "partition-holder"},
                                               {"description", "cut"},
                                               {"budget", {{"outcome", "boundary"}, {"safe_at", 2600}, {"broken_at", 3000},
                                                           {"options", {{"lo", 0}, {"hi", 6000}}}}},
                                               {"measured", "kept only below 3000 ms of cut (kept at 2600 ms)"},
                                               {"classes", {{"session-lost", 3}}},
                                               {"data", {{"safe", true}, {"tries", 9}}},
                                               {"dir", "budgets/partition-holder"},
                                               {"plot", "<svg class=\"rate-plot\"></svg>"}},
                                              {{"fault", "pause-after-send"}, {"refused", "needs an adapter that can"}}})}};
  const std::string md = datasheet_markdown(sheet);
  EXPECT_NE(md.find("told 2 of 3 violations' holders, 20 ms after the other grant (median; p90 30, max 30)"),
            std::string::npos) << md;
  EXPECT_NE(md.find("unique and increasing; after every server crashed: kept increasing in 3 runs"), std::string::npos);
  EXPECT_NE(md.find("| partition-holder | 2600–3000 ms | kept only below 3000 ms of cut (kept at 2600 ms) | "
                    "session-lost 3 | safe in 9 tries |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| pause-after-send | refused | refused: needs an adapter that can |"), std::string::npos) << md;
  const std::string html = datasheet_html(sheet);
  EXPECT_NE(html.find("<svg class=\"rate-plot\">"), std::string::npos) << "the plot inline";
  EXPECT_NE(html.find("href=\"budgets/partition-holder/budget.md\""), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "readable offline, nothing to run";
}

}  // namespace
}  // namespace fencecheck

namespace fencecheck {
namespace {

TEST(DataVerdict, CountsDecidedTriesAndNamesTheLossNearestTheSafeSide) {
  auto probe = [](std::int64_t x, json resource, const char* result = "safe") {
    return json{{"magnitude", x}, {"tries", json::array({{{"result", result}, {"detail", {{"checkers", {{"resource", resource}}}}}}})}};
  };
  const json above = budget("boundary", 500, 1000, "above",
                            json::array({probe(3000, false), probe(1000, false), probe(500, true), probe(0, "skipped")}));
  EXPECT_EQ(data_verdict(above), json({{"safe", false}, {"lost_from_ms", 1000}, {"tries", 3}}));
  const json below = budget("boundary", 750, 500, "below", json::array({probe(0, false), probe(500, false), probe(750, true)}));
  EXPECT_EQ(data_verdict(below), json({{"safe", false}, {"lost_up_to_ms", 500}, {"tries", 3}}));
  const json undecided_only = budget("undecided", nullptr, nullptr, "above", json::array({probe(0, false, "undecided")}));
  EXPECT_TRUE(data_verdict(undecided_only).is_null()) << "a try that said nothing is not evidence of loss";
  EXPECT_EQ(data_verdict(budget("safe-everywhere", 3000, nullptr, "above", json::array({probe(3000, true)}))),
            json({{"safe", true}, {"tries", 1}}));
}

}  // namespace
}  // namespace fencecheck
