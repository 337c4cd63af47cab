// The resource checker on lock-append histories shaped like real runs, finished and cut
// short (the controller killed near the end): a cut-short run is judged only on what its
// reads prove, never with a lost update that did not happen.
#include <gtest/gtest.h>

#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

// Four rounds by processes 1..4, 10 ms apart (8 events each); the last one is cut after its
// write unless `finished`, which also adds the runner's final read.
void four_rounds(HistoryBuilder& h, bool finished) {
  json list = json::array();
  for (std::int64_t i = 0; i < 4; ++i) lock_append_round(h, i + 1, i + 1, list, i * 10.0, finished || i < 3);
  if (finished) h.read(1, "k0", list, 100, 101);
}

TEST(CutShortRun, FinishedRunIsValid) {
  HistoryBuilder h;
  four_rounds(h, true);
  CheckReport all = h.check();
  EXPECT_EQ(all.exit_code(), 0) << all.summary();
  auto r = h.result("resource");
  EXPECT_EQ(r.stats["writes_judged"], 4);
  EXPECT_EQ(r.stats["writes_undecided"], 0);
}

TEST(CutShortRun, TheWritersOwnReadIsNoFinalReadForItsWrite) {
  HistoryBuilder h;
  four_rounds(h, false);  // process 4 read [10,20,30] and wrote [10,20,30,40]; then the kill
  CheckReport all = h.check();
  EXPECT_EQ(all.exit_code(), 2) << all.summary();
  auto r = h.result("resource");
  ASSERT_EQ(r.verdict, Verdict::kUnknown) << r.summary;
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(r.stats["writes_judged"], 3);
  EXPECT_EQ(r.stats["writes_undecided"], 1);
  const json& u = r.stats["undecided"][0];
  EXPECT_EQ(u["key"], "k0");
  EXPECT_EQ(u["write"]["index"], 29);
  EXPECT_EQ(u["write"]["process"], 4);
  EXPECT_EQ(u["final_read"]["invoke_index"], 26);
  EXPECT_EQ(u["final_read"]["index"], 27);
  EXPECT_EQ(u["final_read"]["process"], 4);
  EXPECT_EQ(r.summary,
            "the lost-update rule of k0 is undecided: the ok write of 40 by process 4 (c4) (index 29) completed "
            "at 0.035 s, not before the last ok read of k0 was invoked (index 27 by process 4 (c4), invoked at "
            "0.032 s), and its element is not in that read; no read of k0 was taken after it (the run may have "
            "been cut short); 3 ok writes judged, all present");
}

// Process 1 takes token 1, reads [] and is paused past its lease; process 2 takes token 2,
// reads [] and writes [20]; process 1 wakes and writes [10] over it (the unfenced lost
// update); process 3 reads [10] and writes [10,30]. `finished` adds a release and a final read.
void lost_update_then(HistoryBuilder& h, bool finished) {
  json empty = json::array();
  h.acquire(1, "l0", 0, 1, 1).read(1, "k0", empty, 2, 3).nemesis("pause", 4);
  json list = json::array();
  lock_append_round(h, 2, 2, list, 10);
  h.nemesis("resume", 30).write(1, "k0", {10}, "ok", 31, 32, 1).release(1, "l0", 33, 34, 1);
  list = {10};
  lock_append_round(h, 3, 3, list, 40, finished);
  if (finished) h.read(2, "k0", list, 60, 61);
}

TEST(CutShortRun, ALostUpdateAnEarlierReadProvesStaysAViolation) {
  HistoryBuilder h;
  lost_update_then(h, false);
  auto r = h.result("resource");
  ASSERT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["kind"], "lost-update");
  EXPECT_EQ(r.violations[0]["element"], 20);
  EXPECT_EQ(r.violations[0]["write"]["process"], 2);
  EXPECT_EQ(r.violations[0]["final_read"]["process"], 3);
  EXPECT_EQ(r.stats["writes_undecided"], 1) << "process 3's own write is still not judged";
  EXPECT_EQ(h.check().exit_code(), 1);
}

TEST(CutShortRun, TheSameLostUpdateInAFinishedRun) {
  HistoryBuilder h;
  lost_update_then(h, true);
  auto r = h.result("resource");
  ASSERT_EQ(r.verdict, Verdict::kInvalid) << r.summary;
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.violations[0]["element"], 20);
  EXPECT_EQ(r.stats["writes_undecided"], 0);
  EXPECT_EQ(r.stats["writes_judged"], 3);
}

}  // namespace
}  // namespace fencecheck::testing
