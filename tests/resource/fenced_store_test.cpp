#include "harness/resource/fenced_store.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {
namespace {

// A store with a log captured in memory and a clock that ticks 10 ns per reading.
struct StoreFixture {
  explicit StoreFixture(ResourceMode mode)
      : store(mode, log, [this] { return now += 10; }) {}
  std::vector<nlohmann::json> lines() const {
    std::vector<nlohmann::json> out;
    std::istringstream in(log.str());
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  std::ostringstream log;
  std::int64_t now = 0;
  FencedStore store;
};

TEST(FencedStore, NeverWrittenKeyReadsNull) {
  StoreFixture f(ResourceMode::kFenced);
  EXPECT_EQ(f.store.read("k", std::nullopt, "c1").value, "null");
}

TEST(FencedStore, FencedRejectsLowerTokenAllowsEqualAndHigher) {
  StoreFixture f(ResourceMode::kFenced);
  EXPECT_TRUE(f.store.write("k", 5, "[1]", "c1").accepted);
  WriteOutcome stale = f.store.write("k", 4, "[2]", "c2");
  EXPECT_FALSE(stale.accepted);
  EXPECT_NE(stale.reason.find("stale token 4"), std::string::npos) << stale.reason;
  EXPECT_EQ(f.store.read("k", std::nullopt, "c1").value, "[1]");
  EXPECT_TRUE(f.store.write("k", 5, "[1,3]", "c1").accepted);
  EXPECT_TRUE(f.store.write("k", 9, "[1,3,4]", "c3").accepted);
  EXPECT_FALSE(f.store.write("k", 8, "[0]", "c2").accepted);
  EXPECT_EQ(f.store.read("k", std::nullopt, "c1").value, "[1,3,4]");
}

TEST(FencedStore, RejectedWriteDoesNotRaiseHighestToken) {
  StoreFixture f(ResourceMode::kFenced);
  EXPECT_TRUE(f.store.write("k", 5, "1", "c1").accepted);
  EXPECT_FALSE(f.store.write("k", 3, "2", "c2").accepted);
  // Had the rejected 3 counted, nothing changes; the test is that 5 is still the bar
  // and that a later 4 is still refused while 5 passes.
  EXPECT_FALSE(f.store.write("k", 4, "3", "c2").accepted);
  EXPECT_TRUE(f.store.write("k", 5, "4", "c1").accepted);
}

TEST(FencedStore, NullTokenIsAcceptedAndDoesNotMoveTheBar) {
  StoreFixture f(ResourceMode::kFenced);
  EXPECT_TRUE(f.store.write("k", std::nullopt, "1", "c1").accepted);
  EXPECT_TRUE(f.store.write("k", 2, "2", "c1").accepted);
  EXPECT_TRUE(f.store.write("k", std::nullopt, "3", "c2").accepted);
  EXPECT_FALSE(f.store.write("k", 1, "4", "c2").accepted);
}

TEST(FencedStore, UnfencedAcceptsEverything) {
  StoreFixture f(ResourceMode::kUnfenced);
  EXPECT_TRUE(f.store.write("k", 9, "[1]", "c1").accepted);
  EXPECT_TRUE(f.store.write("k", 1, "[2]", "c2").accepted);
  EXPECT_EQ(f.store.read("k", std::nullopt, "c1").value, "[2]");
}

TEST(FencedStore, KeysAreIndependent) {
  StoreFixture f(ResourceMode::kFenced);
  EXPECT_TRUE(f.store.write("a", 10, "1", "c1").accepted);
  EXPECT_TRUE(f.store.write("b", 1, "2", "c1").accepted);
  EXPECT_FALSE(f.store.write("a", 1, "3", "c1").accepted);
  EXPECT_EQ(f.store.read("a", std::nullopt, "c1").value, "1");
  EXPECT_EQ(f.store.read("b", std::nullopt, "c1").value, "2");
}

TEST(FencedStore, InvalidJsonValueIsRejectedAndLogged) {
  StoreFixture f(ResourceMode::kUnfenced);
  WriteOutcome out = f.store.write("k", 1, "[1,", "c1");
  EXPECT_FALSE(out.accepted);
  auto lines = f.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0]["value"].is_null());
  EXPECT_FALSE(lines[0]["accepted"].get<bool>());
  EXPECT_EQ(f.store.read("k", std::nullopt, "c1").value, "null");
}

// Two overlapping holders each read, then write back what they read plus one element.
// Fenced writes alone let the older holder write first and the newer one overwrite it: a
// lost update. Fenced reads close that gap: the newer holder's read raises the bar, so
// the older holder's write is refused.
TEST(FencedStore, FencedReadsStopTheOverlappingReadModifyWrite) {
  StoreFixture f(ResourceMode::kFenced);
  ASSERT_TRUE(f.store.read("k", 1, "c1").accepted);  // the old holder reads []
  ReadOutcome newer = f.store.read("k", 2, "c2");    // its lease ran out; the new holder reads
  ASSERT_TRUE(newer.accepted);
  EXPECT_EQ(newer.value, "null");
  WriteOutcome old_write = f.store.write("k", 1, "[10]", "c1");
  EXPECT_FALSE(old_write.accepted) << "the newer read raised the bar to token 2";
  EXPECT_NE(old_write.reason.find("stale token 1 < highest accepted 2"), std::string::npos);
  EXPECT_TRUE(f.store.write("k", 2, "[20]", "c2").accepted);
  ReadOutcome stale = f.store.read("k", 1, "c1");
  EXPECT_FALSE(stale.accepted);
  EXPECT_EQ(stale.value, "");
  EXPECT_EQ(f.lines().back()["token"], 1);
  EXPECT_FALSE(f.lines().back()["accepted"].get<bool>());

  StoreFixture open(ResourceMode::kUnfenced);  // without the fence the update is lost
  open.store.read("k", 1, "c1");
  open.store.read("k", 2, "c2");
  EXPECT_TRUE(open.store.write("k", 1, "[10]", "c1").accepted);
  EXPECT_TRUE(open.store.write("k", 2, "[20]", "c2").accepted);
  EXPECT_EQ(open.store.read("k", std::nullopt, "c1").value, "[20]");
}

TEST(FencedStore, LogLinesFollowTheContract) {
  StoreFixture f(ResourceMode::kFenced);
  f.store.read("k", std::nullopt, "c1");
  f.store.write("k", 7, "[ 1 ]", "c1");
  f.store.write("k", 6, "[2]", "c2");
  f.store.read("k", std::nullopt, "c2");
  f.store.write("j", std::nullopt, "null", "c3");
  const std::vector<nlohmann::json> lines = f.lines();
  ASSERT_EQ(lines.size(), 5u);
  const nlohmann::json expected[] = {
      {{"seq", 0}, {"time", 10}, {"key", "k"}, {"op", "read"}, {"token", nullptr},
       {"value", nullptr}, {"accepted", true}, {"reason", nullptr}, {"client", "c1"}},
      {{"seq", 1}, {"time", 20}, {"key", "k"}, {"op", "write"}, {"token", 7},
       {"value", {1}}, {"accepted", true}, {"reason", nullptr}, {"client", "c1"}},
      {{"seq", 2}, {"time", 30}, {"key", "k"}, {"op", "write"}, {"token", 6},
       {"value", {2}}, {"accepted", false}, {"reason", "stale token 6 < highest accepted 7"},
       {"client", "c2"}},
      {{"seq", 3}, {"time", 40}, {"key", "k"}, {"op", "read"}, {"token", nullptr},
       {"value", {1}}, {"accepted", true}, {"reason", nullptr}, {"client", "c2"}},
      {{"seq", 4}, {"time", 50}, {"key", "j"}, {"op", "write"}, {"token", nullptr},
       {"value", nullptr}, {"accepted", true}, {"reason", nullptr}, {"client", "c3"}},
  };
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], expected[i]) << i;
  // Field order matters to readers of the raw file.
  EXPECT_EQ(f.log.str().rfind("{\"seq\":0,\"time\":10,\"key\":\"k\",\"op\":\"read\",", 0), 0u);
}

TEST(FencedStore, StoresAndLogsTheCanonicalText) {
  // The checkers compare values in canonical_json's form; the store keeps and logs that
  // same text, so resource.jsonl and the history agree byte for byte.
  StoreFixture f(ResourceMode::kFenced);
  EXPECT_TRUE(f.store.write("k", 1, R"( {"b": [1.0, 2.5], "a": "\u00e9"} )", "c1").accepted);
  const std::string canonical = "{\"a\":\"\xc3\xa9\",\"b\":[1,2.5]}";
  EXPECT_EQ(f.store.read("k", std::nullopt, "c1").value, canonical);
  EXPECT_NE(f.log.str().find(",\"value\":" + canonical + ","), std::string::npos) << f.log.str();
}

TEST(FencedStore, ConcurrentWritersGetConsecutiveSeqs) {
  StoreFixture f(ResourceMode::kFenced);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&f, key = std::string(1, static_cast<char>('a' + t))] {
      for (int i = 0; i < 200; ++i) f.store.write(key, i, "[]", "c");
    });
  }
  for (auto& th : threads) th.join();
  auto lines = f.lines();
  ASSERT_EQ(lines.size(), 800u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["seq"].get<std::uint64_t>(), i);
    if (i > 0) {
      EXPECT_GT(lines[i]["time"].get<std::int64_t>(), lines[i - 1]["time"].get<std::int64_t>());
    }
  }
}

TEST(ResourceMode, Parses) {
  EXPECT_EQ(parse_resource_mode("fenced"), ResourceMode::kFenced);
  EXPECT_EQ(parse_resource_mode("unfenced"), ResourceMode::kUnfenced);
  EXPECT_FALSE(parse_resource_mode("Fenced"));
}

}  // namespace
TEST(FencedStore, CasSetsOnlyWhenTheKeyHoldsTheExpectedValue) {
  StoreFixture f(ResourceMode::kUnfenced);
  EXPECT_TRUE(f.store.cas("k", std::nullopt, "null", "1", "c1").accepted);
  WriteOutcome late = f.store.cas("k", std::nullopt, "null", "2", "c2");
  EXPECT_FALSE(late.accepted);
  EXPECT_NE(late.reason.find("holds 1"), std::string::npos) << late.reason;
  EXPECT_TRUE(f.store.cas("k", std::nullopt, "1.0", "{\"b\":1,\"a\":2}", "c2").accepted)
      << "compared as canonical JSON";
  EXPECT_TRUE(f.store.cas("k", std::nullopt, "{\"a\":2,\"b\":1}", "3", "c1").accepted);
  EXPECT_EQ(f.store.read("k", std::nullopt, "c1").value, "3");
  auto lines = f.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1]["op"], "cas");
  EXPECT_EQ(lines[1]["expect"], nullptr);
  EXPECT_EQ(lines[1]["value"], 2);
  EXPECT_EQ(lines[1]["accepted"], false);
  EXPECT_FALSE(lines[4].contains("expect")) << "reads carry no expect";
}

TEST(FencedStore, RefusedCasNeverRaisesTheFenceAndStaleCasIsRefused) {
  StoreFixture f(ResourceMode::kFenced);
  EXPECT_TRUE(f.store.write("k", 5, "1", "c1").accepted);
  EXPECT_FALSE(f.store.cas("k", 9, "0", "2", "c2").accepted);  // mismatch
  EXPECT_TRUE(f.store.write("k", 6, "4", "c1").accepted) << "the refused cas raised the fence to 9";
  WriteOutcome stale = f.store.cas("k", 5, "4", "7", "c3");
  EXPECT_FALSE(stale.accepted);
  EXPECT_NE(stale.reason.find("stale token 5"), std::string::npos) << stale.reason;
  WriteOutcome bad = f.store.cas("k", std::nullopt, "{", "7", "c3");
  EXPECT_FALSE(bad.accepted);
  EXPECT_EQ(bad.reason, "expect is not valid JSON");
}

}  // namespace fencecheck
