// The row contract without a run (label `unit`): a plan is the same for the same input, byte
// for byte, and every row's id is the hash of what it runs; a plan line that was edited, or
// lacks a field, is refused naming the file, line and field; collect takes exactly the rows
// of a store that holds them all, and names the rows missing, duplicated or foreign, never
// reading a half-made (.partial-) row.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "harness/suite/scenarios.h"
#include "harness/suite/suite_plan.h"
#include "harness/suite/suite_rows.h"
#include "tests/runtime/test_util.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;

std::vector<PlanRow> kleppmann_plan(int repeat, std::uint64_t seed = 1) {
  return make_plan("kleppmann", scenario_cases(kleppmann_scenarios(), {"K1", "K3"}), repeat, seed);
}

TEST(SuitePlan, TheSameInputGivesTheSamePlanByteForByte) {
  const std::string a = plan_text(kleppmann_plan(2)), b = plan_text(kleppmann_plan(2));
  EXPECT_EQ(a, b);
  std::vector<PlanRow> plan = kleppmann_plan(2);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].c.id, "K1");
  EXPECT_EQ(plan[1].repeat, 2);
  EXPECT_EQ(plan[2].seed, 1001u) << "case k, repeat r: seed + 1000 k + r, as run_suite draws them";
  std::set<std::string> ids;
  for (const PlanRow& r : plan) ids.insert(r.id);
  EXPECT_EQ(ids.size(), 4u) << "every row its own id";
  EXPECT_NE(plan_text(kleppmann_plan(2, 7)), a) << "another seed, other rows";
  EXPECT_EQ(kleppmann_plan(3)[0].id, plan[0].id) << "a row's id depends on what it runs, not on the plan's length";
}

TEST(SuitePlan, ALineRoundTripsAndAnEditedOrIncompleteOneIsRefusedByName) {
  const PlanRow row = kleppmann_plan(1)[1];
  PlanRow back = parse_plan_line(plan_line(row), "plan.jsonl:2");
  EXPECT_EQ(plan_line(back), plan_line(row));
  EXPECT_EQ(back.c.scenario, find_scenario("K3")) << "the expectations come from this fencecheck's table";
  auto error_of = [](const std::string& text) {
    try {
      parse_plan_line(text, "plan.jsonl:2");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  nlohmann::json j = nlohmann::json::parse(plan_line(row));
  j["seed"] = 99;
  EXPECT_NE(error_of(j.dump()).find("plan.jsonl:2: field \"id\""), std::string::npos) << error_of(j.dump());
  j = nlohmann::json::parse(plan_line(row));
  j.erase("args");
  EXPECT_NE(error_of(j.dump()).find("plan.jsonl:2: field \"args\" is missing"), std::string::npos);
  j = nlohmann::json::parse(plan_line(row));
  j["repeat"] = "two";
  EXPECT_NE(error_of(j.dump()).find("field \"repeat\" has the wrong type"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("not a JSON object"), std::string::npos);
}

TEST(SuitePlan, ReadingAPlanNamesTheLineOfABadRow) {
  testing::TempDir tmp;
  std::vector<PlanRow> plan = kleppmann_plan(1);
  std::ofstream(tmp.path() / "plan.jsonl") << plan_line(plan[0]) << "\n{\"id\": 1}\n";
  try {
    read_plan(tmp.path() / "plan.jsonl");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("plan.jsonl:2: field"), std::string::npos) << e.what();
  }
  std::ofstream(tmp.path() / "swapped.jsonl") << plan_line(plan[1]) << "\n" << plan_line(plan[0]) << "\n";
  EXPECT_THROW(read_plan(tmp.path() / "swapped.jsonl"), std::invalid_argument) << "rows out of their index order";
  EXPECT_EQ(read_plan([&] {
              std::ofstream(tmp.path() / "good.jsonl") << plan_text(plan);
              return tmp.path() / "good.jsonl";
            }()).size(),
            plan.size());
}

// A store holding row `row` as run-row leaves it: rows/<id>/row.json and its run's results.
void store_row(const fs::path& store, const PlanRow& row, bool valid) {
  const fs::path run = store / "runs" / row.id / row.c.id / "20261204T000000.000Z";
  fs::create_directories(run);
  std::ofstream(run / "results.json") << nlohmann::json{{"valid", valid}, {"checkers", nlohmann::json::object()}}.dump();
  fs::create_directories(store / "rows" / row.id);
  std::ofstream(store / "rows" / row.id / "row.json")
      << nlohmann::json{{"plan_row", nlohmann::json::parse(plan_line(row))},
                        {"verdict", true},
                        {"exit_code", valid ? 0 : 1},
                        {"seconds", 1.5},
                        {"run", fs::relative(run, store).string()}}
             .dump();
}

TEST(SuiteCollect, AStoreWithEveryRowIsCollectedInPlanOrder) {
  testing::TempDir tmp;
  std::vector<PlanRow> plan = kleppmann_plan(2);
  for (auto it = plan.rbegin(); it != plan.rend(); ++it) store_row(tmp.path(), *it, it->c.id == "K1");
  // A half-made row of a killed run-row: never collected.
  fs::create_directories(tmp.path() / "rows" / (".partial-" + plan[0].id + "-1"));
  CollectResult c = collect_rows(tmp.path(), plan);
  EXPECT_TRUE(c.problems.empty()) << c.problems.front();
  EXPECT_EQ(c.suite, "kleppmann");
  ASSERT_EQ(c.result.rows.size(), 2u);
  EXPECT_EQ(c.result.rows[0].c.id, "K1");
  ASSERT_EQ(c.result.rows[0].runs.size(), 2u);
  EXPECT_EQ(c.result.rows[0].runs[1].seed, plan[1].seed);
  EXPECT_EQ(c.result.rows[0].runs[0].verdict_text(), "valid");
  EXPECT_EQ(c.result.rows[1].runs[0].verdict_text(), "invalid");
  EXPECT_EQ(collect_rows(tmp.path(), std::nullopt).result.rows.size(), 2u) << "without a plan: by recorded index";
}

TEST(SuiteCollect, HolesDuplicatesAndForeignRowsAreEachNamed) {
  testing::TempDir tmp;
  std::vector<PlanRow> plan = kleppmann_plan(2);
  store_row(tmp.path(), plan[0], true);
  store_row(tmp.path(), plan[2], true);
  store_row(tmp.path(), plan[3], true);
  store_row(tmp.path(), kleppmann_plan(2, 50)[0], true);  // K1 repeat 1 again, from another seed's plan
  PlanRow other = make_plan("libraries", scenario_cases(library_scenarios(), {"L1"}), 1, 1)[0];
  store_row(tmp.path(), other, true);
  CollectResult c = collect_rows(tmp.path(), plan);
  std::string all;
  for (const auto& p : c.problems) all += p + "\n";
  EXPECT_NE(all.find("missing: row 1 (K1, repeat 2"), std::string::npos) << all;
  EXPECT_NE(all.find("foreign: rows/" + other.id), std::string::npos) << all;
  EXPECT_NE(all.find("foreign: rows/" + kleppmann_plan(2, 50)[0].id), std::string::npos) << all;
  EXPECT_EQ(c.problems.size(), 3u) << all;
  // Without a plan, the other seed's K1 repeat 1 is a duplicate of this one's.
  CollectResult loose = collect_rows(tmp.path(), std::nullopt);
  std::string loose_all;
  for (const auto& p : loose.problems) loose_all += p + "\n";
  EXPECT_NE(loose_all.find("duplicated: K1 repeat 1"), std::string::npos) << loose_all;
  // A store with no rows: with the plan, every row is missing (an interrupted suite, an
  // engine whose pods never ran); without one there is nothing to name.
  EXPECT_THROW(collect_rows(tmp.path() / "none", plan), std::invalid_argument) << "no store at all";
  fs::create_directories(tmp.path() / "empty");
  CollectResult empty = collect_rows(tmp.path() / "empty", plan);
  EXPECT_EQ(empty.problems.size(), plan.size());
  EXPECT_EQ(empty.suite, "kleppmann");
  EXPECT_TRUE(empty.result.rows.empty());
  EXPECT_THROW(collect_rows(tmp.path() / "empty", std::nullopt), std::invalid_argument) << "no rows, no plan";
}

}  // namespace
}  // namespace fencecheck

namespace fencecheck {
namespace {

// A partial row is judged dead only where its maker's pid means something: the same pid
// namespace of the same boot (pods sharing a store have overlapping pids).
TEST(SuiteRows, APartialRowIsDeadOnlyInItsOwnPidNamespaceWhenItsMakerIsGone) {
  const std::string me = "fencecheck-kleppmann-rows-3-1b2c3d4e-4026531836-42";
  auto dead = [](int) { return false; };
  auto alive = [](int) { return true; };
  EXPECT_TRUE(is_dead_partial("fencecheck-kleppmann-rows-3-1b2c3d4e-4026531836-7", me, dead));
  EXPECT_FALSE(is_dead_partial("fencecheck-kleppmann-rows-3-1b2c3d4e-4026531836-7", me, alive)) << "a live try";
  EXPECT_TRUE(is_dead_partial("other-host-1b2c3d4e-4026531836-42", me, alive)) << "an earlier process with my pid";
  EXPECT_FALSE(is_dead_partial("fencecheck-kleppmann-rows-3-1b2c3d4e-4026532000-7", me, dead)) << "another pod";
  EXPECT_FALSE(is_dead_partial("fencecheck-kleppmann-rows-3-99999999-4026531836-7", me, dead)) << "another boot";
  EXPECT_FALSE(is_dead_partial("1234", me, dead)) << "an older run-row's form";
  EXPECT_FALSE(is_dead_partial("h-1b2c3d4e-4026531836-x", me, dead)) << "no pid";
  const std::string mine = row_maker();
  EXPECT_TRUE(is_dead_partial(mine, mine, alive)) << mine;
  EXPECT_EQ(std::count(mine.begin(), mine.end(), '-') >= 3, true) << mine;
}

}  // namespace
}  // namespace fencecheck
