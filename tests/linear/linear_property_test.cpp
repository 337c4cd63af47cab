// Property test: simulate a correct object under random concurrency (the history must be
// linearizable), then corrupt one return value; the checker must agree with a brute-force
// oracle that tries every order consistent with real time, on histories of at most 7 ops.
// The oracle has its own model code so that a bug in models.h cannot hide itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include "tests/linear/test_history.h"

namespace fencecheck {
namespace {

using testing::check_linearizable;

enum class Model { kMutex, kFencedMutex, kRegister, kCasRegister };
const char* model_name(Model m) {
  switch (m) {
    case Model::kMutex: return "mutex";
    case Model::kFencedMutex: return "fenced-mutex";
    case Model::kRegister: return "register";
    case Model::kCasRegister: return "cas-register";
  }
  return "";
}

constexpr Nanos kInf = std::numeric_limits<Nanos>::max();
constexpr int kNull = -1;

struct SimOp {
  std::int64_t process;
  std::string f;
  Nanos call, ret;  // ret kInf for info
  enum { kOk, kFail, kInfo } outcome;
  int a = kNull, b = kNull;  // acquire: token; read: value read; write: value; cas: expect, new
};

// ---- the oracle ----

struct OracleState {
  std::int64_t holder = -1;
  int max_token = std::numeric_limits<int>::min();
  int value = kNull;
};

bool oracle_step(Model m, const SimOp& op, OracleState& s) {
  if (op.f == "acquire") {
    if (s.holder != -1) return false;
    if (m == Model::kFencedMutex && op.outcome == SimOp::kOk) {
      if (op.a <= s.max_token) return false;
      s.max_token = op.a;
    }
    s.holder = op.process;
    return true;
  }
  if (op.f == "release") {
    if (s.holder != op.process) return false;
    s.holder = -1;
    return true;
  }
  if (op.f == "read") return s.value == op.a;
  if (op.f == "write") {
    s.value = op.a;
    return true;
  }
  if (s.value != op.a) return false;  // cas
  s.value = op.b;
  return true;
}

// Configurations (placed ops as a bit mask, state) already shown to fail. The search
// stays exhaustive: this only avoids re-exploring a configuration reached again.
using FailedSet = std::set<std::tuple<std::uint32_t, std::int64_t, int, int>>;

// Every op that counts: ok ops must all be placed, info ops may be; fail ops and info
// reads never count.
bool oracle_search(Model m, const std::vector<SimOp>& ops, std::vector<bool>& placed, OracleState s,
                   FailedSet& failed) {
  bool all_ok_placed = true;
  std::uint32_t mask = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!placed[i] && ops[i].outcome == SimOp::kOk) all_ok_placed = false;
    if (placed[i]) mask |= 1U << i;
  }
  if (all_ok_placed) return true;
  auto config = std::make_tuple(mask, s.holder, s.max_token, s.value);
  if (failed.count(config)) return false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (placed[i]) continue;
    bool ready = true;  // every op that returned before i was invoked is placed
    for (std::size_t j = 0; j < ops.size(); ++j) {
      if (!placed[j] && j != i && ops[j].outcome == SimOp::kOk && ops[j].ret < ops[i].call) ready = false;
    }
    OracleState next = s;
    if (!ready || !oracle_step(m, ops[i], next)) continue;
    placed[i] = true;
    bool ok = oracle_search(m, ops, placed, next, failed);
    placed[i] = false;
    if (ok) return true;
  }
  failed.insert(config);
  return false;
}

// A process retired (an info op) while it held the lock gives it back at some unknown time
// after that op's invoke, or never: an info release. `ops` are in completion order.
void add_releases_implied_by_retirement(std::vector<SimOp>& ops) {
  std::set<std::int64_t> holding;
  std::vector<SimOp> implied;
  for (const SimOp& op : ops) {
    if (op.f == "release") holding.erase(op.process);
    if (op.outcome == SimOp::kInfo && holding.erase(op.process) > 0) {
      implied.push_back(SimOp{op.process, "release", op.call, kInf, SimOp::kInfo});
    }
    if (op.f == "acquire" && op.outcome == SimOp::kOk) holding.insert(op.process);
  }
  ops.insert(ops.end(), implied.begin(), implied.end());
}

bool oracle_linearizable(Model m, std::vector<SimOp> ops) {
  if (m == Model::kMutex || m == Model::kFencedMutex) add_releases_implied_by_retirement(ops);
  std::erase_if(ops, [](const SimOp& op) {
    return op.outcome == SimOp::kFail || (op.outcome == SimOp::kInfo && op.f == "read");
  });
  std::vector<bool> placed(ops.size(), false);
  FailedSet failed;
  return oracle_search(m, ops, placed, OracleState{}, failed);
}

// ---- the simulation of a correct object ----

std::vector<SimOp> simulate(Model m, std::mt19937_64& rng, int n_ops, int max_processes = 4) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  struct Pending {
    SimOp op;
    Nanos effect;
    bool takes_effect;
  };
  std::vector<SimOp> done;
  std::vector<std::optional<Pending>> slots(static_cast<std::size_t>(uniform(2, max_processes)));
  std::vector<std::int64_t> process(slots.size());
  std::vector<Nanos> free_at(slots.size(), 0);
  for (std::size_t i = 0; i < slots.size(); ++i) process[i] = static_cast<std::int64_t>(i);
  std::int64_t next_process = static_cast<std::int64_t>(slots.size());
  OracleState object;
  int next_token = 1;
  std::vector<bool> holds(64, false);
  int started = 0;
  for (Nanos now = 0; started < n_ops || std::any_of(slots.begin(), slots.end(), [](auto& s) { return s.has_value(); });
       ++now) {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      auto& slot = slots[i];
      if (!slot && started < n_ops && now >= free_at[i] && uniform(0, 2) == 0) {
        SimOp op{process[i], "", now, 0, SimOp::kOk};
        if (m == Model::kMutex || m == Model::kFencedMutex) {
          op.f = holds[static_cast<std::size_t>(process[i])] ? "release" : "acquire";
        } else {
          int r = uniform(0, m == Model::kCasRegister ? 2 : 1);
          op.f = r == 0 ? "read" : r == 1 ? "write" : "cas";
          op.a = uniform(0, 2);
          op.b = uniform(0, 2);
        }
        slot = Pending{op, now + uniform(0, 4), uniform(0, 9) != 0};
        ++started;
      }
      if (slot && now == slot->effect) {
        SimOp& op = slot->op;
        if (op.f == "acquire") {
          if (object.holder == -1 && slot->takes_effect) {
            object.holder = op.process;
            op.a = next_token++;
            holds[static_cast<std::size_t>(op.process)] = true;
          } else {
            op.outcome = slot->takes_effect || uniform(0, 1) ? SimOp::kFail : SimOp::kInfo;
          }
        } else if (op.f == "release") {
          if (slot->takes_effect) {
            object.holder = -1;
            holds[static_cast<std::size_t>(op.process)] = false;
          }
        } else if (op.f == "read") {
          op.a = object.value;
        } else if (slot->takes_effect && (op.f == "write" || object.value == op.a)) {
          object.value = op.f == "write" ? op.a : op.b;
        } else if (op.f == "cas") {
          op.outcome = SimOp::kFail;
        }
        // An op that did not take effect becomes info or fail; one that did may be info.
        if (!slot->takes_effect && op.outcome == SimOp::kOk) op.outcome = uniform(0, 1) ? SimOp::kInfo : SimOp::kFail;
        if (slot->takes_effect && uniform(0, 9) == 0) op.outcome = SimOp::kInfo;
      }
      if (slot && now > slot->effect && uniform(0, 1) == 0) {
        SimOp op = slot->op;
        op.ret = op.outcome == SimOp::kInfo ? kInf : now;
        done.push_back(op);
        free_at[i] = now + uniform(0, 2);
        if (op.outcome == SimOp::kInfo) process[i] = next_process++;  // retired
        slot.reset();
      }
    }
  }
  return done;
}

// Changes one return value, so that the object may no longer look correct.
void corrupt(Model m, std::vector<SimOp>& ops, std::mt19937_64& rng) {
  if (ops.empty()) return;
  SimOp& op = ops[std::uniform_int_distribution<std::size_t>(0, ops.size() - 1)(rng)];
  int other = static_cast<int>(rng() % 3);
  if (op.f == "read" && op.outcome == SimOp::kOk) {
    op.a = op.a == other ? kNull : other;
  } else if (op.outcome == SimOp::kFail) {
    op.outcome = SimOp::kOk;  // claims an effect that never happened
    if (op.f == "acquire") op.a = 100 + other;
  } else if (op.f == "acquire" && op.outcome == SimOp::kOk && m == Model::kFencedMutex) {
    op.a = other;
  } else if (op.outcome == SimOp::kOk && op.f != "read") {
    op.outcome = SimOp::kFail;  // hides an effect that happened
  }
}

std::string json_value(int v) { return v == kNull ? "null" : std::to_string(v); }

struct Line {
  Nanos time;
  int order;
  SimOp op;
  std::string key;
  bool invoke;
};

// The invoke and completion lines of `ops` on `key`, their processes shifted by `offset`.
void add_lines(const std::vector<SimOp>& ops, const std::string& key, std::int64_t offset, std::vector<Line>& out) {
  for (SimOp op : ops) {
    op.process += offset;
    out.push_back({op.call, 1, op, key, true});
    // An info is written right after its invoke; at equal times completions go first,
    // which keeps every process to one op in flight.
    out.push_back({op.ret == kInf ? op.call : op.ret, op.ret == kInf ? 2 : 0, op, key, false});
  }
}

std::vector<Event> to_events(std::vector<Line> lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return std::tie(a.time, a.order) < std::tie(b.time, b.order); });
  testing::TestHistory h;
  for (const Line& l : lines) {
    const SimOp& op = l.op;
    if (l.invoke) {
      std::string value = "null";
      if (op.f == "write") value = "{\"token\":null,\"value\":" + json_value(op.a) + "}";
      if (op.f == "cas") value = "{\"expect\":" + json_value(op.a) + ",\"value\":" + json_value(op.b) + "}";
      h.inv(op.call, op.process, op.f, value, l.key);
    } else if (op.outcome == SimOp::kFail) {
      h.fail(l.time, op.process);
    } else if (op.outcome == SimOp::kInfo) {
      h.info(l.time, op.process);
    } else if (op.f == "acquire") {
      h.ok(l.time, op.process, "{\"token\":" + json_value(op.a) + "}");
    } else {
      h.ok(l.time, op.process, op.f == "read" ? json_value(op.a) : "");
    }
  }
  return h.events;
}

std::vector<Event> to_events(const std::vector<SimOp>& ops) {
  std::vector<Line> lines;
  add_lines(ops, "k", 0, lines);
  return to_events(std::move(lines));
}

class LinearizableProperty : public ::testing::TestWithParam<Model> {};

// Rounds of random histories of min_ops..max_ops ops, correct then corrupted.
void agree_with_oracle(Model m, int rounds, int min_ops, int max_ops, int max_processes) {
  std::mt19937_64 rng(0xfe4ce + static_cast<unsigned>(m) + 1000U * static_cast<unsigned>(max_ops));
  int invalid_seen = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<SimOp> ops =
        simulate(m, rng, std::uniform_int_distribution<int>(min_ops, max_ops)(rng), max_processes);
    ASSERT_TRUE(oracle_linearizable(m, ops)) << "the simulated object itself is not linearizable";
    auto correct = check_linearizable(to_events(ops), model_name(m), 30, std::size_t{1} << 30, 1);
    ASSERT_NE(correct.verdict, Verdict::kInvalid) << "round " << round << ": " << correct.summary;
    corrupt(m, ops, rng);
    bool expected = oracle_linearizable(m, ops);
    auto r = check_linearizable(to_events(ops), model_name(m), 30, std::size_t{1} << 30, 1);
    if (r.verdict == Verdict::kSkipped) continue;  // every op failed
    ASSERT_EQ(r.verdict, expected ? Verdict::kValid : Verdict::kInvalid)
        << "round " << round << ": " << r.summary;
    invalid_seen += expected ? 0 : 1;
  }
  EXPECT_GT(invalid_seen, rounds / 15) << "the corruption rarely breaks linearizability: weak test";
}

// Small enough for the oracle to try every order consistent with real time.
TEST_P(LinearizableProperty, AgreesWithBruteForceOracle) { agree_with_oracle(GetParam(), 1500, 1, 7, 4); }

// Longer and more concurrent, where the engine's shortcuts (just-in-time candidates, pure
// ops first, useless infos left out, the memo) have room to go wrong.
TEST_P(LinearizableProperty, AgreesWithOracleOnLongerHistories) { agree_with_oracle(GetParam(), 1000, 8, 16, 6); }

// Many keys in one history, checked in parallel: one violation per key the oracle rejects.
TEST_P(LinearizableProperty, KeysAreJudgedIndependentlyInParallel) {
  const Model m = GetParam();
  std::mt19937_64 rng(0xbeef + static_cast<unsigned>(m));
  for (int round = 0; round < 100; ++round) {
    std::vector<Line> lines;
    std::uint64_t expected_invalid = 0;
    for (int k = 0; k < 6; ++k) {
      std::vector<SimOp> ops = simulate(m, rng, 7, 4);
      if (rng() % 2) corrupt(m, ops, rng);
      expected_invalid += oracle_linearizable(m, ops) ? 0 : 1;
      add_lines(ops, "key" + std::to_string(k), 100 * k, lines);
    }
    auto r = check_linearizable(to_events(std::move(lines)), model_name(m), 30, std::size_t{1} << 30, 3);
    ASSERT_EQ(r.count, expected_invalid) << "round " << round << ": " << r.summary;
    ASSERT_EQ(r.verdict == Verdict::kInvalid, expected_invalid > 0) << r.summary;
  }
}

INSTANTIATE_TEST_SUITE_P(AllModels, LinearizableProperty,
                         ::testing::Values(Model::kMutex, Model::kFencedMutex, Model::kRegister,
                                           Model::kCasRegister),
                         [](const auto& info) {
                           std::string n = model_name(info.param);
                           std::erase(n, '-');
                           return n;
                         });

}  // namespace
}  // namespace fencecheck
