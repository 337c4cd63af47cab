// The report's timeline model (report/timeline.h): holds by docs/checkers.md's exclusion rule,
// fault windows paired by their "fault", ops paired with their completions.
#include <gtest/gtest.h>

#include "checkers/history_reader.h"
#include "report/timeline.h"
#include "tests/checkers/history_builder.h"
#include "tests/report/nanos.h"

namespace fencecheck::report {
namespace {

using fencecheck::testing::HistoryBuilder;
using nlohmann::json;


Timeline timeline_of(const HistoryBuilder& h) {
  HistoryReader r(h.history_path());
  return build_timeline(r, nullptr);
}

std::string nemesis_line(std::uint64_t index, double t_ms, const char* f, const json& value) {
  return json({{"index", index}, {"time", static_cast<Nanos>(t_ms * 1e6)}, {"process", "nemesis"}, {"type", "info"},
               {"f", f}, {"value", value}})
      .dump();
}

TEST(Timeline, AHoldEndsAtTheHoldersNextReleaseInvokeWhateverItsOutcome) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1);
  h.op(1, "invoke", "release", "l0", {{"token", 1}}, 5).op(1, "fail", "release", "l0", {{"token", 1}}, 6);
  Timeline t = timeline_of(h);
  ASSERT_EQ(t.holds.size(), 1u);
  EXPECT_EQ(t.holds[0].start, 1 * kMs);
  EXPECT_EQ(t.holds[0].end, 5 * kMs);
  EXPECT_EQ(t.holds[0].ended_by, "release");
  EXPECT_EQ(t.holds[0].token, 1);
  EXPECT_EQ(t.holds[0].acquire_index, 1u);
}

TEST(Timeline, ARetiredHolderHoldsUntilTheInvokeOfItsUnknownOp) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1);
  h.op(1, "invoke", "write", "k0", {{"token", 1}, {"value", json::array({1})}}, 3);
  h.op(1, "info", "write", "k0", {{"token", 1}, {"value", json::array({1})}}, 9);
  h.acquire(2, "l0", 10, 11, 2);  // never released: runs to the end of the history
  h.read(3, "k0", json::array({1}), 12, 20);
  Timeline t = timeline_of(h);
  ASSERT_EQ(t.holds.size(), 2u);
  EXPECT_EQ(t.holds[0].end, 3 * kMs);
  EXPECT_EQ(t.holds[0].ended_by, "retired");
  EXPECT_EQ(t.holds[1].end, 20 * kMs);
  EXPECT_EQ(t.holds[1].ended_by, "end-of-history");
  EXPECT_EQ(t.end_time, 20 * kMs);
}

TEST(Timeline, ALostNoticeEndsTheHoldOfItsKeyAndIsKept) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 1).acquire(1, "l1", 2, 3, 2).op(1, "invoke", "read", "k0", nullptr, 4);
  h.lost(1, "l0", 6).op(1, "ok", "read", "k0", nullptr, 7);
  Timeline t = timeline_of(h);
  ASSERT_EQ(t.holds.size(), 2u);
  EXPECT_EQ(t.holds[0].end, 6 * kMs);
  EXPECT_EQ(t.holds[0].ended_by, "lost");
  EXPECT_EQ(t.holds[1].ended_by, "end-of-history") << "only the key the notice names";
  ASSERT_EQ(t.notices.size(), 1u);
  EXPECT_EQ(t.notices[0].time, 6 * kMs);
  EXPECT_EQ(t.notices[0].key, "l0");
  EXPECT_EQ(t.ops.size(), 3u) << "a notice is not an op";
  EXPECT_EQ(t.ops[2].outcome, OpType::kOk) << "the read in flight still pairs with its completion";
}

TEST(Timeline, FailedAndUnknownAcquiresMakeNoHold) {
  HistoryBuilder h;
  h.op(1, "invoke", "acquire", "l0", nullptr, 0).op(1, "fail", "acquire", "l0", nullptr, 1);
  h.op(2, "invoke", "acquire", "l0", nullptr, 2).op(2, "info", "acquire", "l0", nullptr, 3);
  Timeline t = timeline_of(h);
  EXPECT_TRUE(t.holds.empty());
  ASSERT_EQ(t.ops.size(), 2u);
  EXPECT_EQ(t.ops[0].outcome, OpType::kFail);
  EXPECT_EQ(t.ops[1].outcome, OpType::kInfo);
  EXPECT_EQ(t.oks.size(), 0u);
}

TEST(Timeline, AnOpThatNeverCompletedIsPending) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1, 7).op(1, "invoke", "read", "k0", nullptr, 2);
  Timeline t = timeline_of(h);
  ASSERT_EQ(t.ops.size(), 2u);
  EXPECT_FALSE(t.ops[1].outcome.has_value());
  EXPECT_EQ(t.ops[1].complete, -1);
  EXPECT_EQ(t.ops[0].value, "{\"token\":7}");
  ASSERT_EQ(t.oks.size(), 1u);
  EXPECT_EQ(t.oks[0].f, OpFn::kAcquire);
}

TEST(Timeline, FaultWindowsPairStartAndEndByTheirFault) {
  HistoryBuilder h;
  h.raw(nemesis_line(0, 1, "arm", {{"fault", "pause-holder"}, {"ms", 1500}}));
  h.raw(nemesis_line(1, 2, "pause", {{"fault", "pause-holder"}, {"targets", {"c3"}}}));
  h.raw(nemesis_line(2, 3, "partition", {{"fault", "partition-halves"}, {"grudge", {{"n1", {"c1"}}, {"c1", {"n1"}}, {"c2", json::array()}}}}));
  h.raw(nemesis_line(3, 4, "clock-bump", {{"fault", "clock-bump"}, {"deltas", {{"n1", 50}}}, {"offsets", {{"n1", 50}}}}));
  h.raw(nemesis_line(4, 5, "clock-bump", {{"fault", "clock-bump"}, {"deltas", {{"n2", 50}}}, {"offsets", {{"n2", 50}}}}));
  h.raw(nemesis_line(5, 6, "resume", {{"fault", "pause-holder"}, {"targets", {"c3"}}}));
  h.raw(nemesis_line(6, 7, "heal", {{"fault", "partition-halves"}}));
  h.raw(nemesis_line(7, 8, "kill", {{"fault", "kill-server"}, {"targets", {"n1"}}, {"restart_ms", 0}}));
  h.raw(nemesis_line(8, 9, "restart", {{"fault", "restart-server"}, {"targets", {"n2"}}}));
  h.raw(nemesis_line(9, 10, "start", {{"fault", "kill-server"}, {"targets", {"n1"}}}));
  h.raw(nemesis_line(10, 11, "clock-reset", {{"fault", "clock-bump"}, {"targets", {"n1", "n2"}}}));
  h.raw(nemesis_line(11, 12, "pause", {{"fault", "pause-client"}, {"targets", {"c1"}}}));  // never resumed
  h.raw(nemesis_line(12, 20, "heal", {{"fault", "partition-one"}}));  // nothing open: an instant
  Timeline t = timeline_of(h);
  ASSERT_EQ(t.faults.size(), 5u);
  auto expect = [&](std::size_t i, const char* fault, double from, double to, const char* ended, const char* targets) {
    SCOPED_TRACE(fault);
    EXPECT_EQ(t.faults[i].fault, fault);
    EXPECT_EQ(t.faults[i].start, static_cast<Nanos>(from * kMs));
    EXPECT_EQ(t.faults[i].end, static_cast<Nanos>(to * kMs));
    EXPECT_EQ(t.faults[i].ended_by, ended);
    EXPECT_EQ(t.faults[i].targets, targets);
  };
  expect(0, "pause-holder", 2, 6, "resume", "c3");
  expect(1, "partition-halves", 3, 7, "heal", "c1, n1");
  expect(2, "clock-bump", 4, 11, "clock-reset", "n1");  // the second bump joins the open window
  expect(3, "kill-server", 8, 10, "start", "n1");
  expect(4, "pause-client", 12, 20, "", "c1");
  EXPECT_TRUE(t.faults[4].open_at_end);
  EXPECT_FALSE(t.faults[0].open_at_end);
  ASSERT_EQ(t.marks.size(), 3u);  // arm, restart, the unmatched heal
  EXPECT_EQ(t.marks[0].f, "arm");
  EXPECT_EQ(t.marks[1].f, "restart");
  EXPECT_EQ(t.marks[2].f, "heal");
}

TEST(Timeline, NemesisLinesWithoutAFaultPairByTheirVerbs) {
  HistoryBuilder h;
  h.raw(nemesis_line(0, 1, "pause", {{"targets", {"c1"}}}));
  h.raw(nemesis_line(1, 2, "resume", {{"targets", {"c1"}}}));
  Timeline t = timeline_of(h);
  ASSERT_EQ(t.faults.size(), 1u);
  EXPECT_EQ(t.faults[0].fault, "pause");
  EXPECT_EQ(t.faults[0].end, 2 * kMs);
}

}  // namespace
}  // namespace fencecheck::report
