// lock-append's bounded keys: a key full with appends_per_key elements makes its clients
// move to the next generation (k0, k0.1, k0.2 …); no write holds more; the final reads
// cover every generation used; a stale writer's overwrite of an old generation is still
// read finally (unfenced) or refused (fenced). Clients are interleaved by nesting: a
// client's script runs another client's whole loop inside one op, as if it were paused
// there.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/workloads/scripted_session.h"

namespace fencecheck::testing {
namespace {

using json = nlohmann::json;

constexpr int kBound = 3;

std::unique_ptr<Workload> make_append(int keys = 1, int bound = kBound) {
  return find_workload("lock-append")->make(WorkloadOptions{keys, std::chrono::milliseconds(10), bound});
}

std::uint64_t run_elements = 1000;  // the simulated run's unique elements

// One client of `w` on `service` until `budget` ops were invoked.
ScriptedSession drive(const Workload& w, FakeService& service, std::size_t budget) {
  auto s = ScriptedSession::with_fences(std::ref(service), budget);
  s.share_elements(&run_elements);
  w.run_client(s);
  return s;
}

struct Write {
  std::string key;
  json list;
  OpType outcome;
};

std::vector<Write> writes_of(const ScriptedSession& s) {
  std::vector<Write> out;
  for (const auto& op : s.ops) {
    if (op.f == OpFn::kWrite) out.push_back({op.key, op.value["value"], op.outcome});
  }
  return out;
}

std::vector<std::string> read_keys(const ScriptedSession& s) {
  std::vector<std::string> out;
  for (const auto& op : s.ops) {
    if (op.f == OpFn::kRead) out.push_back(op.key);
  }
  return out;
}

// The keys ops of these sessions touched, in final_read_keys' order (lock, then generation).
std::vector<std::string> keys_touched(const std::vector<const ScriptedSession*>& sessions, int keys) {
  std::set<std::string> touched;
  for (const auto* s : sessions) {
    for (const auto& op : s->ops) {
      if (op.f == OpFn::kRead || op.f == OpFn::kWrite) touched.insert(op.key);
    }
  }
  std::vector<std::string> out;
  for (int i = 0; i < keys; ++i) {
    for (int g = 0; touched.contains(resource_key(i, g)); ++g) out.push_back(resource_key(i, g));
  }
  EXPECT_EQ(out.size(), touched.size()) << "a generation was skipped";
  return out;
}

TEST(LockAppendRotation, GenerationKeyNames) {
  EXPECT_EQ(resource_key(0, 0), "k0");
  EXPECT_EQ(resource_key(0, 1), "k0.1");
  EXPECT_EQ(resource_key(3, 12), "k3.12");
}

TEST(LockAppendRotation, MovesToTheNextGenerationOnceAKeyIsFull) {
  FakeService service;
  auto w = make_append();
  ScriptedSession s = drive(*w, service, 34);
  std::vector<std::pair<std::string, std::size_t>> got;
  for (const auto& wr : writes_of(s)) got.emplace_back(wr.key, wr.list.size());
  std::vector<std::pair<std::string, std::size_t>> want = {
      {"k0", 1}, {"k0", 2}, {"k0", 3}, {"k0.1", 1}, {"k0.1", 2}, {"k0.1", 3}, {"k0.2", 1}, {"k0.2", 2}};
  EXPECT_EQ(got, want);
  // The fourth hold reads the full k0, then k0.1; later holds start where the client left.
  std::vector<std::string> reads = read_keys(s);
  ASSERT_GE(reads.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(reads.begin(), reads.begin() + 6),
            (std::vector<std::string>{"k0", "k0", "k0", "k0", "k0.1", "k0.1"}));
  EXPECT_EQ(std::count(reads.begin(), reads.end(), "k0"), 4);
}

TEST(LockAppendRotation, ALateClientWalksToTheOpenGenerationAndNoWriteExceedsTheBound) {
  FakeService service;
  auto w = make_append();
  ScriptedSession early = drive(*w, service, 60);  // fills k0 … k0.3, part of k0.4
  ScriptedSession late = drive(*w, service, 20);
  std::vector<std::string> walk = read_keys(late);
  ASSERT_GE(walk.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(walk.begin(), walk.begin() + 5),
            (std::vector<std::string>{"k0", "k0.1", "k0.2", "k0.3", "k0.4"}));
  ASSERT_FALSE(writes_of(late).empty());
  EXPECT_EQ(writes_of(late)[0].key, "k0.4");
  for (const auto* s : {&early, &late}) {
    for (const auto& wr : writes_of(*s)) {
      EXPECT_LE(wr.list.size(), static_cast<std::size_t>(kBound)) << wr.key << " " << wr.list;
    }
  }
}

TEST(LockAppendRotation, FinalReadsCoverEveryGenerationOfEveryLock) {
  FakeService service;
  auto w = make_append(/*keys=*/2);
  EXPECT_EQ(w->final_read_keys(), (std::vector<std::string>{"k0", "k1"})) << "before any op";
  ScriptedSession a = drive(*w, service, 90);
  ScriptedSession b = drive(*w, service, 40);
  std::vector<std::string> touched = keys_touched({&a, &b}, 2);
  EXPECT_EQ(w->final_read_keys(), touched);
  EXPECT_TRUE(std::find(touched.begin(), touched.end(), "k1.3") != touched.end()) << "rotated both locks";
}

// Client A reads k0 and is "paused" there while B appends `others` times (rotating past
// k0), then A writes what it read plus its element back to k0. Returns A's session.
ScriptedSession stale_writer(const Workload& w, FakeService& service, std::size_t others,
                             std::vector<ScriptedSession>& later) {
  auto a = ScriptedSession::with_fences(
      [&](OpFn f, const std::string& key, const json& v, std::size_t n, std::optional<std::int64_t> fence) {
        OpResult r = service(f, key, v, n, fence);
        if (f == OpFn::kRead && later.empty()) later.push_back(drive(w, service, others));
        return r;
      },
      4);
  a.share_elements(&run_elements);
  w.run_client(a);
  return a;
}

TEST(LockAppendRotation, AStaleWriteToAnOldGenerationIsReadFinally) {
  FakeService service;
  auto w = make_append();
  std::vector<ScriptedSession> later;
  ScriptedSession a = stale_writer(*w, service, 40, later);
  ASSERT_EQ(later.size(), 1u);
  ASSERT_EQ(writes_of(a).size(), 1u);
  EXPECT_EQ(writes_of(a)[0].key, "k0") << "the stale holder writes the generation it read";
  EXPECT_EQ(writes_of(a)[0].outcome, OpType::kOk);
  ASSERT_GE(w->final_read_keys().size(), 3u) << "the others moved on";
  EXPECT_EQ(w->final_read_keys(), keys_touched({&a, &later[0]}, 1));

  // The resource checker's rule over what the final reads return: every element an ok
  // write added must be in its key's final read. The ones lost are exactly the others'
  // writes to k0 that A's stale write overwrote.
  std::vector<std::string> lost;
  for (const auto* s : {&a, &later[0]}) {
    for (const auto& wr : writes_of(*s)) {
      json final_read = service.value_of(wr.key);
      bool present = std::find(final_read.begin(), final_read.end(), wr.list.back()) != final_read.end();
      if (wr.outcome == OpType::kOk && !present) lost.push_back(wr.key);
    }
  }
  EXPECT_EQ(lost, (std::vector<std::string>(kBound, "k0")));
}

TEST(LockAppendRotation, TheFenceRefusesAStaleWriteToAnOldGeneration) {
  FakeService service(/*fenced=*/true);
  auto w = make_append();
  std::vector<ScriptedSession> later;
  ScriptedSession a = stale_writer(*w, service, 40, later);
  ASSERT_EQ(writes_of(a).size(), 1u);
  EXPECT_EQ(writes_of(a)[0].key, "k0");
  EXPECT_EQ(writes_of(a)[0].outcome, OpType::kFail) << "k0 was filled under higher tokens";
  std::size_t judged = 0;
  for (const auto& wr : writes_of(later[0])) {
    ASSERT_EQ(wr.outcome, OpType::kOk);
    json final_read = service.value_of(wr.key);
    EXPECT_TRUE(std::find(final_read.begin(), final_read.end(), wr.list.back()) != final_read.end())
        << wr.list.back() << " lost from " << wr.key;
    ++judged;
  }
  EXPECT_GT(judged, static_cast<std::size_t>(2 * kBound));
}

TEST(LockAppendRotation, AHolderPausedBeforeItsReadIsRefusedOnTheGenerationItRemembers) {
  FakeService service(/*fenced=*/true);
  auto w = make_append();
  std::vector<ScriptedSession> later;
  // A's first acquire completes, then the others run, then A reads with its old token.
  auto a = ScriptedSession::with_fences(
      [&](OpFn f, const std::string& key, const json& v, std::size_t n, std::optional<std::int64_t> fence) {
        OpResult r = service(f, key, v, n, fence);
        if (f == OpFn::kAcquire && later.empty()) later.push_back(drive(*w, service, 40));
        return r;
      },
      3);
  w->run_client(a);
  ASSERT_EQ(a.ops.size(), 3u);
  EXPECT_EQ(a.ops[1].key, "k0");
  EXPECT_EQ(a.ops[1].outcome, OpType::kFail) << "the stale read of k0 is refused";
  EXPECT_EQ(a.ops[2].f, OpFn::kRelease) << "no write after a refused read";
}

TEST(LockAppendRotation, TheWalkEndsWithTheTest) {
  // A service whose every key is full: the client walks until the test ends, then releases.
  auto w = make_append();
  ScriptedSession s([](OpFn f, const std::string&, const json& v, std::size_t) {
    return f == OpFn::kAcquire ? ok({{"token", 1}}) : f == OpFn::kRead ? ok({1, 2, 3}) : ok(v);
  }, 10);
  w->run_client(s);
  ASSERT_FALSE(s.ops.empty());
  EXPECT_EQ(s.ops.back().f, OpFn::kRelease);
  EXPECT_TRUE(writes_of(s).empty());
  EXPECT_EQ(w->final_read_keys().back(), "k0." + std::to_string(s.ops.size() - 3));
}

TEST(LockAppendRotation, ABoundBelowOneIsRefused) {
  EXPECT_THROW(make_append(1, 0), std::invalid_argument);
  EXPECT_NO_THROW(make_append(1, 1));
}

}  // namespace
}  // namespace fencecheck::testing
