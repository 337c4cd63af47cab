// Blame against a brute-force oracle: random histories of three processes sharing one lock
// (promises timed, untimed and unsaid, renewals, lost notices, writes that are taken or
// refused), each violation's class, told, acted and writes recomputed here from the rule in
// docs/checkers.md by a plain scan of every event — no streaming, no pruning.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

struct Line {
  std::int64_t t;  // µs, unique in a history
  std::int64_t process;
  std::string type, f;
  json value;
};

// One process's life: acquire, perhaps write and renew, perhaps be told lost, release.
void live(std::int64_t p, std::mt19937_64& rng, std::vector<Line>& out) {
  auto ms = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::int64_t t = ms(0, 20) * 1000 + p;  // µs, unique per process by its last digit
  for (int round = 0; round < 4; ++round) {
    out.push_back({t, p, "invoke", "acquire", nullptr});
    t += ms(1, 40) * 1000;
    json value = {{"token", nullptr}};
    const int kind = ms(0, 9);
    if (kind < 7) value["valid_ms"] = ms(-10, 120);
    if (kind == 7) value["valid_ms"] = nullptr;
    out.push_back({t, p, "ok", "acquire", value});
    const bool timed = kind < 7;
    for (int step = ms(0, 4); step > 0; --step) {
      t += ms(1, 30) * 1000;
      if (ms(0, 2) == 0 && timed) {
        out.push_back({t, p, "notice", "renewed", {{"valid_ms", ms(0, 120)}}});
      } else if (ms(0, 2) == 0) {
        out.push_back({t, p, "invoke", "read", nullptr});
        t += ms(1, 5) * 1000;
        const bool ok = ms(0, 1);
        out.push_back({t, p, ok ? "ok" : "fail", "read", ok ? json::array({p}) : json()});
      } else {
        json w = {{"token", nullptr}, {"value", json::array({p, round, step})}};
        out.push_back({t, p, "invoke", "write", w});
        t += ms(1, 5) * 1000;
        out.push_back({t, p, ms(0, 1) ? "ok" : "fail", "write", w});
      }
    }
    t += ms(1, 30) * 1000;
    if (ms(0, 3) == 0) {
      out.push_back({t, p, "notice", "lost", nullptr});
      t += ms(1, 10) * 1000;
    }
    out.push_back({t, p, "invoke", "release", {{"token", nullptr}}});
    t += ms(1, 5) * 1000;
    out.push_back({t, p, "ok", "release", {{"token", nullptr}}});
    t += ms(1, 30) * 1000;
  }
}

struct Expected {
  std::string cls;
  std::optional<std::int64_t> told_latency;  // µs
  bool acted = false;
  int accepted = 0, refused = 0;
};

// The rule, by brute force, for the hold whose acquire ok is lines[ok].
std::optional<Expected> oracle(const std::vector<Line>& lines, std::size_t ok) {
  const Line& grant = lines[ok];
  const std::int64_t p = grant.process;
  std::int64_t asked = 0;
  for (std::size_t i = 0; i < ok; ++i) {
    if (lines[i].process == p && lines[i].type == "invoke") asked = lines[i].t;
  }
  std::int64_t end = lines.back().t;
  bool told = false;
  for (std::size_t i = ok + 1; i < lines.size(); ++i) {
    const Line& l = lines[i];
    if (l.process != p) continue;
    if ((l.type == "invoke" && l.f == "release") || l.f == "lost") {
      end = l.t;
      told = l.f == "lost";
      break;
    }
  }
  std::optional<std::int64_t> later;
  bool later_void = false;  // the later grant's own promise was over by its ok
  auto ms_of = [](const json& valid) { return valid.get<std::int64_t>() * 1000; };
  for (std::size_t i = ok + 1; i < lines.size() && !later; ++i) {
    const Line& l = lines[i];
    if (l.process == p || l.type != "ok" || l.f != "acquire" || l.t >= end) continue;
    later = l.t;
    std::int64_t invoked = 0;
    for (std::size_t j = 0; j < i; ++j) {
      if (lines[j].process == l.process && lines[j].type == "invoke") invoked = lines[j].t;
    }
    later_void = l.value.contains("valid_ms") && l.value["valid_ms"].is_number() &&
                 invoked + ms_of(l.value["valid_ms"]) <= l.t;
  }
  if (!later) return std::nullopt;
  Expected x;
  if (told) x.told_latency = end - *later;
  const json& v = grant.value;
  std::optional<std::int64_t> promised_end;
  if (later_void) {
    x.cls = "granted-expired";
    if (v.contains("valid_ms") && v["valid_ms"].is_number()) {
      promised_end = asked + ms_of(v["valid_ms"]);
      for (std::size_t i = ok + 1; i < lines.size() && lines[i].t <= *later; ++i) {
        if (lines[i].process == p && lines[i].f == "renewed") promised_end = lines[i].t + ms_of(lines[i].value["valid_ms"]);
      }
    }
  } else if (!v.contains("valid_ms")) {
    x.cls = "unclassified";
  } else if (v["valid_ms"].is_null()) {
    x.cls = "session-lost";
  } else if (asked + ms_of(v["valid_ms"]) <= grant.t) {
    x.cls = "granted-expired";
    promised_end = asked + ms_of(v["valid_ms"]);
  } else {
    std::int64_t e = asked + ms_of(v["valid_ms"]);
    for (std::size_t i = ok + 1; i < lines.size() && lines[i].t <= *later; ++i) {
      if (lines[i].process == p && lines[i].f == "renewed") e = lines[i].t + ms_of(lines[i].value["valid_ms"]);
    }
    x.cls = *later < e ? "promise-broken" : "overstayed";
    promised_end = e;
  }
  for (std::size_t i = ok + 1; i < lines.size() && lines[i].t <= end; ++i) {
    const Line& l = lines[i];
    if (l.process != p || l.type != "invoke") continue;
    if (promised_end && l.t >= *promised_end) x.acted = true;
    if ((l.f != "write" && l.f != "read") || l.t < *later) continue;
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      if (lines[j].process != p) continue;
      x.accepted += lines[j].type == "ok" && l.f == "write";
      x.refused += lines[j].type == "fail";
      break;
    }
  }
  return x;
}

TEST(ExclusionBlameOracle, RandomHistoriesAgreeWithTheRuleByBruteForce) {
  std::size_t violations = 0;
  std::map<std::string, int> classes;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Line> lines;
    for (std::int64_t p = 1; p <= 3; ++p) live(p, rng, lines);
    std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.t < b.t; });
    HistoryBuilder h;
    std::int64_t index = 0;
    for (const Line& l : lines) {
      h.raw(json{{"index", index++}, {"time", l.t * 1000}, {"process", l.process}, {"type", l.type}, {"f", l.f},
                 {"key", l.f == "write" || l.f == "read" ? "k0" : "l0"}, {"value", l.value}}.dump());
    }
    CheckRequest req;
    req.history = h.history_path();
    req.checkers = {"exclusion"};
    req.options.max_violations = 1000;
    const CheckResult r = run_checks(req).results.at(0).second;
    for (const json& v : r.violations) {
      const std::size_t ok = v["held"]["acquire_index"].get<std::size_t>();
      const std::optional<Expected> x = oracle(lines, ok);
      ASSERT_TRUE(x.has_value()) << "seed " << seed << ": no later grant inside hold " << ok;
      const json& b = v["blame"];
      const std::string where = "seed " + std::to_string(seed) + ", hold at line " + std::to_string(ok) + ": " +
                                v["message"].get<std::string>();
      EXPECT_EQ(b["class"], x->cls) << where;
      EXPECT_EQ(b["told"], x->told_latency ? "during" : "never") << where;
      if (x->told_latency) {
        EXPECT_EQ(b["notice_latency"], *x->told_latency * 1000) << where;
      }
      if (x->cls == "overstayed") {
        EXPECT_EQ(b["acted_after_end"], x->acted) << where;
      }
      EXPECT_EQ(b["writes_in_overlap"]["accepted"], x->accepted) << where;
      EXPECT_EQ(b["writes_in_overlap"]["refused"], x->refused) << where;
      ++violations;
      ++classes[x->cls];
    }
  }
  // The generator reaches every class, so that none of the comparisons above is vacuous.
  EXPECT_GT(violations, 100u);
  for (const char* c : {"granted-expired", "promise-broken", "overstayed", "session-lost", "unclassified"}) {
    EXPECT_GT(classes[c], 0) << c;
  }
}

}  // namespace
}  // namespace fencecheck::testing
