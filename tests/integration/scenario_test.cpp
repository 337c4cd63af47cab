// Kleppmann's scenarios (harness/suite/scenarios.cpp) and the lock libraries' rows
// (library_scenarios.cpp), the databases' rows (database_scenarios.cpp) and the stores' (store_scenarios.cpp), but those Scenario::not_in_ci
// leaves out, each run once end to end with real
// servers and a fixed seed (label `integration`, root: partitions need network
// namespaces). A scenario that predicts a violation must show it in the checkers it names;
// a safe one must keep every checker it expects valid valid — and be decided, never
// unknown. `fencecheck suite kleppmann --repeat N` measures the same table's rates.
#include <unistd.h>

#include <gtest/gtest.h>

#include "harness/suite/scenarios.h"
#include "tests/integration/run_fixture.h"

namespace fencecheck::testing {
namespace {

class ScenarioRun : public RunTest, public ::testing::WithParamInterface<const Scenario*> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the scenarios run in network namespaces (root)";
    RunTest::SetUp();
  }
};

TEST_P(ScenarioRun, VerdictsAreWhatTheArgumentPredicts) {
  const Scenario& s = *GetParam();
  std::string args;
  for (const auto& a : s.args) args += "'" + a + "' ";
  auto r = run(args + "--seed 7");
  ASSERT_NE(r.code, 3) << r.out;
  ScenarioVerdict v = judge_scenario(s, results());
  std::string why;
  for (const auto& m : v.mismatches) why += m + "\n";
  EXPECT_TRUE(v.as_expected) << s.id << " " << s.title << "\n" << why << r.out;
  EXPECT_NE(r.code, 2) << "every scenario is decided: a bench problem is never a pass\n" << r.out;
  if (!s.safe()) {
    EXPECT_EQ(r.code, 1) << r.out;
  }
}

// The rows of a table that run in CI (Scenario::not_in_ci says why a row does not).
std::vector<const Scenario*> rows_in_ci(const std::vector<Scenario>& table) {
  std::vector<const Scenario*> out;
  for (const auto& s : table) {
    if (s.not_in_ci.empty()) out.push_back(&s);
  }
  return out;
}

std::string row_name(const ::testing::TestParamInfo<const Scenario*>& info) {
  std::string name;
  for (char c : info.param->id) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Kleppmann, ScenarioRun, ::testing::ValuesIn(rows_in_ci(kleppmann_scenarios())), row_name);
// The lock libraries' rows, through their adapters (scripts/setup.sh installs them).
INSTANTIATE_TEST_SUITE_P(Libraries, ScenarioRun, ::testing::ValuesIn(rows_in_ci(library_scenarios())), row_name);
// The databases' rows: MariaDB servers and Galera clusters the harness starts.
INSTANTIATE_TEST_SUITE_P(Databases, ScenarioRun, ::testing::ValuesIn(rows_in_ci(database_scenarios())), row_name);
// The stores' rows: NATS JetStream clusters the harness starts.
INSTANTIATE_TEST_SUITE_P(Stores, ScenarioRun, ::testing::ValuesIn(rows_in_ci(store_scenarios())), row_name);

}  // namespace
}  // namespace fencecheck::testing
