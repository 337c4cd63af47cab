// Fault plans and shrinking with real servers (label `integration`, root: cuts need the
// netns runtime). A plan with every trigger and action kind runs against Redlock; --replay
// of that run applies the same nemesis lines at the same offsets (± 50 ms); a bad plan is
// refused before anything starts; `fencecheck shrink` cuts a short failed pause-holder run
// down to one fault and a few seconds that still fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "tests/integration/run_fixture.h"

namespace fencecheck::testing {
namespace {

class PlanRun : public RunTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "cuts need the netns runtime (root)";
    RunTest::SetUp();
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = store_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // Every nemesis line of a run's history, by what it did ("pause|pause-client|[\"c1\"]"),
  // with the offset from the run's first client event, in ms, at which its action began:
  // its planned_ns when it has one, else its time. A line is written once its action took
  // effect, and how long that took (a restart's graceful stop: 20-100 ms under load) is the
  // server's behaviour, not the plan's; --replay reproduces when each action began.
  static std::map<std::string, std::vector<double>> lines_by_what(const fs::path& run) {
    std::map<std::string, std::vector<double>> out;
    std::ifstream in(run / "history.jsonl");
    double first = -1;
    for (std::string text; std::getline(in, text);) {
      json j = json::parse(text);
      if (j["process"] != "nemesis") {
        if (first < 0) first = j["time"].get<double>();
        continue;
      }
      const json& v = j["value"];
      std::string what = j["f"].get<std::string>() + "|" + v.value("fault", "");
      for (const char* field : {"targets", "grudge", "deltas"}) {
        if (v.contains(field)) what += "|" + v[field].dump();
      }
      double began = j["time"].get<double>();
      if (v.contains("planned_ns")) began = std::min(began, v["planned_ns"].get<double>());
      out[what].push_back((began - first) / 1e6);
    }
    return out;
  }
};

// Every trigger (at_ms, after_ms, on acquire-ok by the holder, on release by a client, a
// key) and every action (cut, heal-cut, clock, clock-reset, pause, kill, restart, replay,
// for_ms undos).
constexpr const char* kEveryKind = R"([
  {"at_ms": 300, "do": "cut", "grudge": {"c1": ["n3"]}},
  {"on": "acquire-ok", "client": "holder", "key": "l0", "do": "pause", "node": "holder", "for_ms": 300},
  {"after_ms": 100, "do": "clock", "offsets": {"n2": 5000}},
  {"on": "release", "client": "c2", "do": "heal-cut"},
  {"after_ms": 100, "do": "clock-reset"},
  {"after_ms": 100, "do": "kill", "nodes": ["n1"], "for_ms": 200},
  {"after_ms": 900, "do": "restart", "nodes": ["n2"]},
  {"after_ms": 600, "do": "cut", "grudge": {"c2": ["n1"]}, "for_ms": 300},
  {"after_ms": 100, "do": "clock", "offsets": {"n3": -2000}, "for_ms": 200},
  {"after_ms": 500, "do": "replay", "f": "pause", "value": {"fault": "pause-server", "targets": ["n3"], "ms": 200}}
])";

TEST_F(PlanRun, APlanOfEveryKindRoundTripsThroughReplayWithin50Ms) {
  const std::string plan = write("every.json", kEveryKind);
  auto r = run("--backend redlock --backend-opt n=3 --concurrency 2 --plan " + plan + " --time-limit 8 --seed 5");
  ASSERT_NE(r.code, 3) << r.out;
  const fs::path original = latest();
  ASSERT_TRUE(fs::exists(original / "plan.json")) << "the run keeps its copy of the plan";
  const auto recorded = lines_by_what(original);
  for (const char* f : {"partition|", "heal|", "clock-bump|", "clock-reset|", "pause|pause-client", "pause|pause-server",
                        "kill|kill-server", "restart|restart-server"}) {
    EXPECT_TRUE(std::any_of(recorded.begin(), recorded.end(), [&](const auto& kv) { return kv.first.rfind(f, 0) == 0; }))
        << "no line " << f << " in " << r.out;
  }
  auto again = run_command((original / "repro.sh").string() + " --name replayed");
  ASSERT_NE(again.code, 3) << again.out;
  const auto replayed = lines_by_what(latest());
  for (const auto& [what, times] : recorded) {
    if (what.rfind("ready|", 0) == 0) continue;  // when servers answer again: their startup, not the plan
    SCOPED_TRACE(what);
    ASSERT_TRUE(replayed.contains(what)) << "missing from the replay";
    ASSERT_EQ(replayed.at(what).size(), times.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
      EXPECT_NEAR(replayed.at(what)[i], times[i], 50.0) << "line " << i << " of its kind, ms from the first op";
    }
  }
}

TEST_F(PlanRun, ABadPlanIsRefusedBeforeAnythingStarts) {
  const std::string plan = write("bad.json", "[\n  {\"at_ms\": 0, \"do\": \"cut\", \"grudge\": {\"c1\": [\"n3\"]}},\n"
                                             "  {\"after_ms\": 5, \"do\": \"pause\", \"node\": \"n7\", \"for_ms\": 9}\n]");
  auto r = run("--backend redlock --backend-opt n=3 --plan " + plan);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("bad.json:3: field 'node': step 2: node \"n7\" is not a server or client"), std::string::npos)
      << r.out;
  EXPECT_TRUE(run_dir().empty()) << "nothing started";
  auto both = run("--plan " + plan + " --nemesis pause-holder");
  EXPECT_EQ(both.code, 3);
  EXPECT_NE(both.out.find("--nemesis cannot be given with --plan"), std::string::npos) << both.out;
}

TEST_F(PlanRun, ShrinkCutsAPauseHolderRunToOneFaultThatStillFails) {
  // K1's pauses (1.5 s past a 0.5 s lease) as K1 makes them, two or three in 7 s (every
  // measured K1 run had its second pause 2.4-4.2 s into the test). Each try of the search
  // replays the run: the shorter the original, the shorter the search.
  auto r = run("--nemesis pause-holder --ttl-ms 500 --pause-ms 1500 --hold-ms 200 --nemesis-interval 1000 "
               "--time-limit 7 --seed 3");
  ASSERT_EQ(r.code, 1) << r.out;
  const fs::path failed = latest();
  auto s = run_command("timeout 600 " + std::string(FENCECHECK_BIN) + " shrink " + failed.string() +
                       " --tries 3 --budget 300 --store " + store_ + "/shrunk");
  ASSERT_EQ(s.code, 0) << s.out;
  fs::path out;
  for (const auto& e : fs::recursive_directory_iterator(store_ + "/shrunk")) {
    if (e.path().filename() == "shrink.json" && e.path().parent_path().filename() != "tries") out = e.path().parent_path();
  }
  ASSERT_FALSE(out.empty()) << s.out;
  json doc = json::parse(std::ifstream(out / "shrink.json"));
  EXPECT_GE(doc["faults"].size(), 2u) << "the original had more than one fault";
  EXPECT_EQ(doc["final"]["faults"].size(), 1u) << doc.dump(2);
  EXPECT_LE(doc["final"]["length_s"].get<double>(), doc["original"]["length_s"].get<double>() - 1.0)
      << "the length was not cut";
  EXPECT_GE(doc["final"]["reproduced"].get<int>(), 2) << "of 3 tries";
  for (const char* f : {"plan.json", "repro.sh", "report.html", "history.jsonl", "results.json"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  EXPECT_EQ(json::parse(std::ifstream(out / "results.json"))["checkers"]["exclusion"]["valid"], false);
}

}  // namespace
}  // namespace fencecheck::testing
