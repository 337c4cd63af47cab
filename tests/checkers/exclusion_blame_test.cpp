// Blame (docs/checkers.md, "Blame"): each violation's class at its boundaries, renewals,
// whether the holder was told, what it did after, and the run's sums.
#include <gtest/gtest.h>

#include "checkers/input_file.h"
#include "checkers/safety.h"
#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

// An acquire of l0 by p invoked at t_inv, ok at t_ok, promising `valid` (a number of ms, or
// null; with `bound` when given; the member left out when `valid` is "absent").
void grant(HistoryBuilder& h, std::int64_t p, double t_inv, double t_ok, json valid, const std::string& bound = "") {
  json value = {{"token", nullptr}};
  if (valid != "absent") value["valid_ms"] = valid;
  if (!bound.empty()) value["bound"] = bound;
  h.op(p, "invoke", "acquire", "l0", nullptr, t_inv).op(p, "ok", "acquire", "l0", value, t_ok);
}

// Process 1 holds l0 from 10 ms (invoked at 0, promised `valid` ms), process 2 gets it at
// `later` and both release late: one violation; its blame JSON.
json blame_with_later_grant_at(double later, json valid = 1000, double t_ok = 10) {
  HistoryBuilder h;
  grant(h, 1, 0, t_ok, valid);
  grant(h, 2, later - 1, later, 1000);
  h.release(1, "l0", 5000, 5001).release(2, "l0", 6000, 6001);
  CheckResult r = h.result("exclusion");
  EXPECT_EQ(r.verdict, Verdict::kInvalid);
  return r.violations.empty() ? json() : r.violations[0]["blame"];
}

TEST(ExclusionBlame, TheLaterGrantOneMillisecondEitherSideOfThePromisedEnd) {
  EXPECT_EQ(blame_with_later_grant_at(999)["class"], "promise-broken");
  EXPECT_EQ(blame_with_later_grant_at(1000)["class"], "overstayed") << "the promise ends at 1000 ms: over by then";
  json after = blame_with_later_grant_at(1001);
  EXPECT_EQ(after["class"], "overstayed");
  EXPECT_EQ(after["promised_end"], 1'000'000'000) << "invoke (0) + valid_ms: the promise runs from the invoke";
  EXPECT_EQ(after["later_grant"], 1'001'000'000);
  EXPECT_EQ(after["acted_after_end"], true) << "its release at 5000 ms is an act after the end";
}

TEST(ExclusionBlame, AGrantWhoseOwnOkCameAtOrAfterItsPromisedEndIsGrantedExpired) {
  EXPECT_EQ(blame_with_later_grant_at(2000, 100, 101)["class"], "granted-expired") << "1 ms past its promise";
  EXPECT_EQ(blame_with_later_grant_at(2000, 100, 100)["class"], "granted-expired") << "exactly at its end";
  EXPECT_EQ(blame_with_later_grant_at(2000, 100, 99)["class"], "overstayed") << "1 ms before its end";
  EXPECT_EQ(blame_with_later_grant_at(50, -5, 10)["class"], "granted-expired") << "a negative validity";
  // (A later grant cannot come before an end that was past at the earlier grant's own ok:
  // granted-expired and promise-broken never compete.)
}

// etcd#11456: a waiter's grant arrives on a lease that expired while it waited, inside a
// hold another process got properly — the void later grant is to blame, not the holder.
TEST(ExclusionBlame, AVoidLaterGrantIsGrantedExpiredWhateverTheEarlierOnePromised) {
  auto blame_of_later_grant_promising = [](json valid) {
    HistoryBuilder h;
    h.op(2, "invoke", "acquire", "l0", nullptr, 0);
    grant(h, 1, 10, 20, 1000);
    h.op(2, "ok", "acquire", "l0", {{"token", nullptr}, {"valid_ms", valid}}, 200);
    h.release(1, "l0", 500, 501).release(2, "l0", 600, 601);
    return h.result("exclusion").violations.at(0)["blame"];
  };
  json v = blame_of_later_grant_promising(200);  // invoked at 0: over at 200, its own ok
  EXPECT_EQ(v["class"], "granted-expired");
  EXPECT_EQ(v["void_grant"], "later");
  EXPECT_EQ(blame_of_later_grant_promising(201)["class"], "promise-broken") << "1 ms left: a real grant";
  EXPECT_EQ(blame_of_later_grant_promising(nullptr)["class"], "promise-broken");
  EXPECT_EQ(blame_with_later_grant_at(2000, 100, 101)["void_grant"], "earlier");
}

TEST(ExclusionBlame, NoTimePromiseIsSessionLostAndAnUnsaidOneIsUnclassified) {
  json session = blame_with_later_grant_at(500, nullptr);
  EXPECT_EQ(session["class"], "session-lost");
  EXPECT_FALSE(session.contains("promised_end"));

  HistoryBuilder h;
  grant(h, 1, 0, 10, nullptr, "session");
  grant(h, 2, 20, 30, nullptr, "session");
  h.release(1, "l0", 40, 41).release(2, "l0", 50, 51);
  CheckResult r = h.result("exclusion");
  ASSERT_EQ(r.verdict, Verdict::kInvalid);
  EXPECT_EQ(r.violations[0]["blame"]["bound"], "session");
  EXPECT_NE(r.summary.find("session-lost: the lock promised no time (it lived by its session)"), std::string::npos)
      << r.summary;

  json unsaid = blame_with_later_grant_at(500, "absent");
  EXPECT_EQ(unsaid["class"], "unclassified");
  HistoryBuilder old;  // a history without valid_ms: its messages and count are as before
  old.acquire(1, "l0", 0, 10).acquire(2, "l0", 20, 30).release(1, "l0", 40, 41).release(2, "l0", 50, 51);
  CheckResult plain = old.result("exclusion");
  EXPECT_EQ(plain.summary, "process 1 (c1) held l0 from 0.010 s to 0.040 s while process 2 (c2) acquired it at 0.030 s");
  EXPECT_EQ(plain.count_text, "1 hold overlapped by 1 acquire");
  EXPECT_EQ(plain.stats["blame"]["unclassified"], 1);
}

TEST(ExclusionBlame, ARenewalBeforeTheLaterGrantMovesThePromisedEndOneAfterItDoesNot) {
  auto class_with_renewal_at = [](double renewed_at) {
    HistoryBuilder h;
    grant(h, 1, 0, 10, 100);
    h.op(2, "invoke", "acquire", "l0", nullptr, 20);
    h.op(1, "notice", "renewed", "l0", {{"valid_ms", 100}}, renewed_at);
    h.op(2, "ok", "acquire", "l0", {{"token", nullptr}, {"valid_ms", 1000}}, 150);
    h.release(1, "l0", 400, 401).release(2, "l0", 500, 501);
    return h.result("exclusion").violations.at(0)["blame"];
  };
  json renewed = class_with_renewal_at(80);  // promised until 180 ms
  EXPECT_EQ(renewed["class"], "promise-broken");
  EXPECT_EQ(renewed["promised_end"], 180'000'000);
  EXPECT_EQ(class_with_renewal_at(140)["class"], "promise-broken");
  HistoryBuilder late;  // renewed after the later grant: too late
  grant(late, 1, 0, 10, 100);
  grant(late, 2, 20, 150, 1000);
  late.op(1, "notice", "renewed", "l0", {{"valid_ms", 100}}, 151);
  late.release(1, "l0", 400, 401).release(2, "l0", 500, 501);
  EXPECT_EQ(late.result("exclusion").violations.at(0)["blame"]["class"], "overstayed");
}

TEST(ExclusionBlame, ARenewalOfAnotherKeyOrProcessChangesNothing) {
  HistoryBuilder h;
  grant(h, 1, 0, 10, 100);
  h.op(1, "notice", "renewed", "l9", {{"valid_ms", 1000}}, 50);
  h.op(3, "notice", "renewed", "l0", {{"valid_ms", 1000}}, 60);
  grant(h, 2, 149, 150, 100);
  h.release(1, "l0", 400, 401).release(2, "l0", 500, 501);
  EXPECT_EQ(h.result("exclusion").violations.at(0)["blame"]["class"], "overstayed");
}

TEST(ExclusionBlame, ToldDuringTheOverlapWithItsLatencyOrNever) {
  HistoryBuilder h;
  grant(h, 1, 0, 10, 100);
  grant(h, 2, 199, 200, 100);
  h.lost(1, "l0", 700).release(2, "l0", 800, 801);
  grant(h, 3, 900, 901, 100);
  grant(h, 4, 1100, 1101, 100);
  h.release(3, "l0", 1500, 1501).release(4, "l0", 1600, 1601);
  CheckResult r = h.result("exclusion");
  ASSERT_EQ(r.count, 2u);
  EXPECT_EQ(r.violations[0]["blame"]["told"], "during");
  EXPECT_EQ(r.violations[0]["blame"]["notice_latency"], 500'000'000) << "notice at 700 ms, later grant at 200 ms";
  EXPECT_EQ(r.violations[1]["blame"]["told"], "never");
  EXPECT_FALSE(r.violations[1]["blame"].contains("notice_latency"));
  EXPECT_EQ(r.stats["notice"]["told"], 1);
  EXPECT_EQ(r.stats["notice"]["silent"], 1);
  EXPECT_EQ(r.stats["notice"]["median_latency_ns"], 500'000'000);
  EXPECT_EQ(r.stats["notice"]["max_latency_ns"], 500'000'000);
  EXPECT_EQ(r.stats["blame"]["overstayed"], 2);
  EXPECT_EQ(r.count_text, "2 holds overlapped by 2 acquires (overstayed 2; told 1 (median 0.500 s late), silent 1)");
}

TEST(ExclusionBlame, WhatTheHolderDidAfterTheLaterGrant) {
  HistoryBuilder h;
  grant(h, 1, 0, 10, 100);
  h.write(1, "k0", json::array({1}), "ok", 20, 30);  // before the later grant: not counted
  grant(h, 2, 199, 200, 100);
  h.write(1, "k0", json::array({1, 2}), "ok", 300, 310);
  h.write(1, "k0", json::array({1, 2, 3}), "fail", 320, 330);
  h.read(1, "k0", json::array({1}), 340, 350);
  h.op(1, "invoke", "read", "k0", nullptr, 360).op(1, "fail", "read", "k0", nullptr, 365);  // a fence's refusal
  h.release(1, "l0", 400, 401).release(2, "l0", 500, 501);
  json b = h.result("exclusion").violations.at(0)["blame"];
  EXPECT_EQ(b["writes_in_overlap"]["accepted"], 1);
  EXPECT_EQ(b["writes_in_overlap"]["refused"], 2) << "the failed write and the failed read";
  EXPECT_EQ(b["acted_after_end"], true);

  HistoryBuilder idle;  // paused past its promise, and the history ends before it moves again
  grant(idle, 1, 0, 10, 100);
  grant(idle, 2, 199, 200, 100);
  idle.release(2, "l0", 500, 501);
  json quiet = idle.result("exclusion").violations.at(0)["blame"];
  EXPECT_EQ(quiet["class"], "overstayed");
  EXPECT_EQ(quiet["acted_after_end"], false);
}

TEST(ExclusionBlame, ARetiredHolderActedWhenItsRetiringOpWasInvoked) {
  HistoryBuilder h;
  grant(h, 1, 0, 10, 100);
  grant(h, 2, 199, 200, 100);
  h.op(1, "invoke", "write", "k0", {{"token", nullptr}, {"value", {1}}}, 250);
  h.op(1, "info", "write", "k0", {{"token", nullptr}, {"value", {1}}}, 260);
  h.release(2, "l0", 500, 501);
  CheckResult r = h.result("exclusion");
  ASSERT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["held"]["ended_by"], "retired");
  EXPECT_EQ(r.violations[0]["blame"]["class"], "overstayed");
  EXPECT_EQ(r.violations[0]["blame"]["acted_after_end"], true);
  EXPECT_EQ(r.violations[0]["blame"]["writes_in_overlap"]["accepted"], 0) << "its outcome is unknown";
}

TEST(ExclusionBlame, BadPromisesAreRefusedNamingTheLineAndField) {
  // "<line> <field> | <message>" of the reader's error, for a second line `rest`.
  auto error_of = [](const std::string& rest) {
    HistoryBuilder h;
    h.op(1, "invoke", "acquire", "l0", nullptr, 0).raw(R"({"index":1,"time":5,"process":1,)" + rest);
    try {
      h.check("exclusion");
    } catch (const InputError& e) {
      return std::to_string(e.line()) + " " + e.field() + " | " + e.what();
    }
    return std::string("no error");
  };
  auto expect = [&](const std::string& rest, const std::string& where, const std::string& what) {
    const std::string e = error_of(rest);
    EXPECT_EQ(e.rfind(where + " | ", 0), 0u) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  expect(R"("type":"ok","f":"acquire","key":"l0","value":{"token":null,"valid_ms":"soon"}})", "2 value.valid_ms",
         "must be an integer or null, found a string");
  expect(R"("type":"notice","f":"renewed","key":"l0","value":{"valid_ms":null}})", "2 value.valid_ms",
         "must be an integer, found null");
  expect(R"("type":"notice","f":"renewed","key":"l0","value":{}})", "2 value.valid_ms", "missing");
  expect(R"("type":"notice","f":"renewed","key":"l0"})", "2 value", "missing");
  expect(R"("type":"ok","f":"acquire","key":"l0","value":{"token":null,"valid_ms":null,"bound":7}})", "2 value.bound",
         "must be a string, found a number");
}

}  // namespace
}  // namespace fencecheck::testing
