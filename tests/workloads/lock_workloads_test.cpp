// The lock and lock-append workloads, driven by a scripted session: the order of ops, the
// values they carry, and what happens after fail and info completions.
#include <gtest/gtest.h>

#include <set>

#include "tests/workloads/scripted_session.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::json;

std::unique_ptr<Workload> make(const std::string& name, int keys = 1, milliseconds hold = milliseconds(40)) {
  const WorkloadInfo* w = find_workload(name);
  if (w == nullptr) throw std::logic_error("no workload " + name);
  return w->make(WorkloadOptions{keys, hold});
}

// Runs one client of `workload` until `budget` ops were invoked.
ScriptedSession run(const std::string& workload, ScriptedSession::Script script, std::size_t budget,
                    int keys = 1) {
  ScriptedSession s(std::move(script), budget);
  make(workload, keys)->run_client(s);
  return s;
}

std::vector<OpFn> fns(const ScriptedSession& s) {
  std::vector<OpFn> out;
  for (const auto& op : s.ops) out.push_back(op.f);
  return out;
}

TEST(LockAppend, AcquireReadWriteReleaseWithTheGrantsToken) {
  auto s = run("lock-append", [](OpFn f, const std::string&, const json& v, std::size_t) {
    if (f == OpFn::kAcquire) return ok({{"token", 7}});
    if (f == OpFn::kRead) return ok({1, 2});
    return ok(v);
  }, 4);
  ASSERT_EQ(fns(s), (std::vector<OpFn>{OpFn::kAcquire, OpFn::kRead, OpFn::kWrite, OpFn::kRelease}));
  EXPECT_EQ(s.ops[0].key, "l0");
  EXPECT_TRUE(s.ops[0].value.is_null());
  EXPECT_EQ(s.ops[1].key, "k0");
  EXPECT_TRUE(s.ops[1].value.is_null());
  EXPECT_EQ(s.ops[2].key, "k0");
  EXPECT_EQ(s.ops[2].value, json({{"token", 7}, {"value", {1, 2, 100}}}));
  EXPECT_EQ(s.ops[3].key, "l0");
  EXPECT_EQ(s.ops[3].value, json({{"token", 7}}));
  // The hold sits between the read and the write, within --hold-ms.
  ASSERT_EQ(s.sleeps_after[1].size(), 1u);
  EXPECT_LE(s.sleeps_after[1][0], milliseconds(40));
}

TEST(LockAppend, EveryWriteAppendsANewElementToWhatItRead) {
  FakeService service;
  auto s = run("lock-append", std::ref(service), 40);
  std::set<json> added;
  for (const auto& op : s.ops) {
    if (op.f != OpFn::kWrite) continue;
    const json& list = op.value["value"];
    ASSERT_TRUE(list.is_array());
    EXPECT_TRUE(added.insert(list.back()).second) << "element written twice: " << list.back();
    EXPECT_EQ(list.size(), added.size()) << "a write must keep every earlier element";
  }
  EXPECT_EQ(added.size(), 10u);
}

TEST(LockAppend, NullReadIsAnEmptyList) {
  auto s = run("lock-append", [](OpFn f, const std::string&, const json& v, std::size_t) {
    return f == OpFn::kAcquire ? ok({{"token", 1}}) : f == OpFn::kRead ? ok(nullptr) : ok(v);
  }, 4);
  ASSERT_EQ(s.ops.size(), 4u);
  EXPECT_EQ(s.ops[2].value["value"], json::array({100}));
}

TEST(LockAppend, FailedAcquireBacksOffAndRetriesWithoutRelease) {
  auto s = run("lock-append", [](OpFn f, const std::string&, const json& v, std::size_t n) {
    if (f == OpFn::kAcquire) return n == 0 ? fail() : ok({{"token", 2}});
    return f == OpFn::kRead ? ok(json::array()) : ok(v);
  }, 5);
  ASSERT_EQ(fns(s), (std::vector<OpFn>{OpFn::kAcquire, OpFn::kAcquire, OpFn::kRead, OpFn::kWrite,
                                       OpFn::kRelease}));
  ASSERT_EQ(s.sleeps_after[0].size(), 1u) << "no back-off after a refused acquire";
  EXPECT_GE(s.sleeps_after[0][0], milliseconds(5));
  EXPECT_LE(s.sleeps_after[0][0], milliseconds(25));
  EXPECT_EQ(s.ops[4].value, json({{"token", 2}}));
}

// Runs lock-append where the first `broken` op completes with info; acquire n gets token n+1.
ScriptedSession with_info_on(OpFn broken) {
  auto fired = std::make_shared<bool>(false);
  return run("lock-append", [broken, fired](OpFn f, const std::string&, const json& v, std::size_t n) {
    if (f == broken && !*fired) {
      *fired = true;
      return info();
    }
    if (f == OpFn::kAcquire) return ok({{"token", static_cast<int>(n) + 1}});
    return f == OpFn::kRead ? ok(json::array()) : ok(v);
  }, 6);
}

TEST(LockAppend, InfoOnReadAbandonsTheGrant) {
  auto s = with_info_on(OpFn::kRead);
  ASSERT_GE(s.ops.size(), 3u);
  EXPECT_EQ(s.ops[1].f, OpFn::kRead);
  EXPECT_EQ(s.ops[2].f, OpFn::kAcquire) << "after an info the old grant must not be used or released";
  for (const auto& op : s.ops) {
    if (op.f == OpFn::kWrite || op.f == OpFn::kRelease) { EXPECT_NE(op.value["token"], 1) << op.value; }
  }
}

TEST(LockAppend, InfoOnWriteAbandonsTheGrant) {
  auto s = with_info_on(OpFn::kWrite);
  ASSERT_GE(s.ops.size(), 4u);
  EXPECT_EQ(s.ops[2].f, OpFn::kWrite);
  EXPECT_EQ(s.ops[3].f, OpFn::kAcquire);
  for (const auto& op : s.ops) {
    if (op.f == OpFn::kRelease) { EXPECT_NE(op.value["token"], 1); }
  }
}

TEST(LockAppend, FailedReadSkipsTheWriteButReleases) {
  auto s = run("lock-append", [](OpFn f, const std::string&, const json& v, std::size_t) {
    return f == OpFn::kAcquire ? ok({{"token", 3}}) : f == OpFn::kRead ? fail() : ok(v);
  }, 3);
  ASSERT_EQ(fns(s), (std::vector<OpFn>{OpFn::kAcquire, OpFn::kRead, OpFn::kRelease}));
  EXPECT_EQ(s.ops[2].value, json({{"token", 3}}));
}

TEST(LockAppend, LockIGuardsKeyI) {
  FakeService service;
  auto s = run("lock-append", std::ref(service), 200, /*keys=*/3);
  std::set<std::string> locks;
  std::string held;
  for (const auto& op : s.ops) {
    if (op.f == OpFn::kAcquire) held = op.key.substr(1), locks.insert(op.key);
    if (op.f == OpFn::kRead || op.f == OpFn::kWrite) { EXPECT_EQ(op.key, "k" + held); }
    if (op.f == OpFn::kRelease) { EXPECT_EQ(op.key, "l" + held); }
  }
  EXPECT_EQ(locks, (std::set<std::string>{"l0", "l1", "l2"}));
}

TEST(LockAppend, FinalReadCoversEveryKey) {
  EXPECT_EQ(make("lock-append", 3)->final_read_keys(), (std::vector<std::string>{"k0", "k1", "k2"}));
  EXPECT_EQ(make("lock-append", 1)->final_read_keys(), std::vector<std::string>{"k0"});
}

TEST(LockWorkload, AcquireThenReleaseWithTheGrantsToken) {
  FakeService service;
  auto s = run("lock", std::ref(service), 20, /*keys=*/2);
  ASSERT_EQ(s.ops.size(), 20u);
  for (std::size_t i = 0; i + 1 < s.ops.size(); i += 2) {
    ASSERT_EQ(s.ops[i].f, OpFn::kAcquire) << i;
    ASSERT_EQ(s.ops[i + 1].f, OpFn::kRelease) << i;
    EXPECT_EQ(s.ops[i + 1].key, s.ops[i].key);
    EXPECT_EQ(s.ops[i + 1].value, json({{"token", static_cast<int>(i / 2) + 1}}));
    ASSERT_EQ(s.sleeps_after[i].size(), 1u) << "the hold";
    EXPECT_LE(s.sleeps_after[i][0], milliseconds(40));
  }
  EXPECT_TRUE(make("lock")->final_read_keys().empty());
}

TEST(LockWorkload, FailedOrUnknownAcquireIsNotReleased) {
  auto s = run("lock", [](OpFn f, const std::string&, const json& v, std::size_t n) {
    if (f == OpFn::kAcquire) return n == 0 ? fail() : n == 1 ? info() : ok({{"token", 9}});
    return ok(v);
  }, 4);
  ASSERT_EQ(fns(s), (std::vector<OpFn>{OpFn::kAcquire, OpFn::kAcquire, OpFn::kAcquire, OpFn::kRelease}));
  EXPECT_EQ(s.sleeps_after[0].size(), 1u) << "back-off after the refusal";
  EXPECT_EQ(s.ops[3].value, json({{"token", 9}}));
}

TEST(CasWorkload, ReadsThenSetsFromTheValueReadToAUniqueOneWithoutALock) {
  json value = nullptr;  // the register
  auto s = run("cas", [&](OpFn f, const std::string&, const json& v, std::size_t n) {
    if (f == OpFn::kRead) return ok(value);
    if (n == 3) return OpResult{OpType::kFail, v, "value mismatch"};  // someone else won
    value = v["value"];
    return ok(v);
  }, 8, 2);
  std::set<json> values;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const auto& op = s.ops[i];
    EXPECT_NE(op.f, OpFn::kAcquire) << "no lock at all";
    EXPECT_EQ(op.f, i % 2 == 0 ? OpFn::kRead : OpFn::kCas) << i;
    EXPECT_TRUE(op.key == "k0" || op.key == "k1") << op.key;
    if (op.f != OpFn::kCas) continue;
    EXPECT_EQ(op.key, s.ops[i - 1].key) << "sets the key it read";
    EXPECT_TRUE(values.insert(op.value["value"]).second) << "unique values";
  }
  ASSERT_EQ(s.ops.size(), 8u);
  EXPECT_EQ(s.ops[1].value["expect"], nullptr);
  EXPECT_EQ(s.ops[5].value["expect"], s.ops[1].value["value"]) << "expects what it read";
  EXPECT_EQ(s.sleeps_after[3].size(), 1u) << "backs off after a refused cas";
  EXPECT_EQ(make("cas", 3)->final_read_keys(), (std::vector<std::string>{"k0", "k1", "k2"}));
}

TEST(Workloads, StopAtOnceWhenNotRunning) {
  for (const auto& w : workload_registry()) {
    auto s = run(w.name, [](OpFn, const std::string&, const json& v, std::size_t) { return ok(v); }, 0);
    EXPECT_TRUE(s.ops.empty()) << w.name;
  }
}

TEST(Workloads, Registry) {
  ASSERT_NE(find_workload("lock"), nullptr);
  ASSERT_NE(find_workload("lock-append"), nullptr);
  EXPECT_EQ(find_workload("bogus"), nullptr);
  EXPECT_EQ(find_workload(""), nullptr);
  EXPECT_EQ(workload_names(), "lock, lock-append, cas");
  ASSERT_NE(find_workload("cas"), nullptr);
  EXPECT_EQ(lock_name(3), "l3");
  EXPECT_EQ(resource_key(12), "k12");
}

}  // namespace
}  // namespace fencecheck::testing

namespace fencecheck::testing {
namespace {

// --hold-min-ms: every hold lies between the shortest and the longest; equal, it is fixed.
TEST(Lock, EveryHoldLiesBetweenTheShortestAndTheLongest) {
  for (const auto& [lo, hi] : {std::pair(30, 40), std::pair(40, 40)}) {
    ScriptedSession s([](OpFn, const std::string&, const json&, std::size_t) { return ok(json::object()); }, 40);
    find_workload("lock")->make(WorkloadOptions{1, milliseconds(hi), kAppendsPerKey, milliseconds(lo)})->run_client(s);
    std::size_t holds = 0;
    for (std::size_t op = 0; op < s.ops.size(); ++op) {
      if (s.ops[op].f != OpFn::kAcquire) continue;
      for (const auto d : s.sleeps_after[op]) {
        ++holds;
        EXPECT_GE(d, milliseconds(lo));
        EXPECT_LE(d, milliseconds(hi));
      }
    }
    EXPECT_GE(holds, 10u) << "the client held the lock between its acquires and releases";
  }
}

}  // namespace
}  // namespace fencecheck::testing
