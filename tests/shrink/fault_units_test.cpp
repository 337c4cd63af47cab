// A recorded run's faults as the shrinker counts them (one unit from a family's first line
// to the line that ends it), and the plan that replays some of them moved to the start:
// read back by the plan reader, so what shrink writes is a plan `--plan` accepts.
#include "harness/shrink/fault_units.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "nemesis/plan.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

ReplayLine line(int at_ms, std::string f, nlohmann::json value) {
  return ReplayLine{milliseconds(at_ms), std::move(f), std::move(value), 0};
}

std::vector<ReplayLine> recorded() {
  return {
      line(1000, "arm", {{"fault", "pause-holder"}, {"ms", 3000}}),
      line(1200, "pause", {{"fault", "pause-holder"}, {"targets", {"c3"}}, {"ms", 3000}}),
      line(2000, "partition", {{"fault", "partition-one"}, {"grudge", {{"n1", {"c1"}}, {"c1", {"n1"}}}}}),
      line(4200, "resume", {{"fault", "pause-holder"}, {"targets", {"c3"}}}),
      line(5000, "heal", {{"fault", "partition-one"}}),
      line(9000, "arm", {{"fault", "pause-holder"}, {"ms", 3000}}),
      line(9500, "pause", {{"fault", "pause-holder"}, {"targets", {"c1"}}, {"ms", 3000}}),
      line(12500, "resume", {{"fault", "pause-holder"}, {"targets", {"c1"}}}),
      line(20000, "kill", {{"fault", "kill-server"}, {"targets", {"n2"}}, {"restart_ms", 0}}),
      line(20010, "start", {{"fault", "kill-server"}, {"targets", {"n2"}}}),
  };
}

TEST(FaultUnits, AUnitRunsFromAFamilysFirstLineToTheLineThatEndsIt) {
  std::vector<FaultUnit> units = group_fault_units(recorded());
  ASSERT_EQ(units.size(), 4u);
  EXPECT_EQ(units[0].family, "pause");
  EXPECT_EQ(units[0].lines.size(), 3u) << "arm, pause, resume";
  EXPECT_EQ(units[1].family, "partition");
  EXPECT_EQ(units[1].lines.size(), 2u);
  EXPECT_EQ(units[2].lines.front().after, milliseconds(9000));
  EXPECT_EQ(units[3].lines.size(), 2u) << "a kill whose ready never came stays one unit";
  EXPECT_EQ(units[0].describe(), "pause-holder at 1.0 s: arm, pause c3, resume c3");
}

TEST(FaultUnits, AKillSessionIsOneUnitPerArming) {
  std::vector<FaultUnit> units = group_fault_units({
      line(1000, "arm", {{"fault", "kill-session"}}),
      line(1300, "kill-session", {{"fault", "kill-session"}, {"targets", {"c2"}}, {"sessions", 1}}),
      line(4000, "arm", {{"fault", "kill-session"}}),
      line(4100, "kill-session", {{"fault", "kill-session"}, {"targets", {"c4"}}, {"sessions", 1}}),
  });
  ASSERT_EQ(units.size(), 2u) << "the kill ends what its arming began";
  EXPECT_EQ(units[0].family, "session");
  EXPECT_EQ(units[1].describe(), "kill-session at 4.0 s: arm, kill-session c4");
}

TEST(FaultUnits, APlanOfKeptUnitsMovesThemToTheLeadInAndReadsBackAsAPlan) {
  std::vector<FaultUnit> units = group_fault_units(recorded());
  nlohmann::json plan = plan_of_units(units, {2, 3}, milliseconds(1000));
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[0]["at_ms"], 1000) << "the first kept line comes after the lead-in";
  EXPECT_EQ(plan[1]["at_ms"], 1500) << "spacing kept";
  EXPECT_EQ(plan[3]["at_ms"], 12000);
  EXPECT_EQ(plan[0]["do"], "replay");
  EXPECT_EQ(plan[3]["f"], "kill");
  EXPECT_DOUBLE_EQ(fitted_length_s(units, {2, 3}, milliseconds(1000), milliseconds(3000)), 12.01 + 3);
  EXPECT_DOUBLE_EQ(fitted_length_s(units, {}, milliseconds(1000), milliseconds(3000)), 4.0);

  const std::filesystem::path file = std::filesystem::temp_directory_path() / "fc-units-plan.json";
  std::ofstream(file) << plan.dump(2);
  Plan read = read_plan(file.string(), {"n1", "n2", "n3"}, {"c1", "c2", "c3"});
  EXPECT_EQ(read.steps.size(), 5u);
  EXPECT_EQ(read.faults, (std::vector<std::string>{"kill-server", "pause-holder"}));
  EXPECT_THROW(read_plan(file.string(), {"n1"}, {"c1", "c2", "c3"}), InputError) << "n2 is not a server there";
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace fencecheck
