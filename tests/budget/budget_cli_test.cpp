// `fencecheck budget` and `fencecheck datasheet` with bad options, through the real binary:
// exit 3, a message naming the option, and no search directory left behind. No test here
// starts a server.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/command.h"

namespace fencecheck::testing {
namespace {

struct BadBudget {
  std::string args;
  std::string expected;  // part of the message
};

class BudgetCliBadOption : public ::testing::TestWithParam<BadBudget> {};

TEST_P(BudgetCliBadOption, Exit3NamesTheOptionAndLeavesNothing) {
  const std::filesystem::path store =
      std::filesystem::temp_directory_path() / ("fc-budget-cli-" + std::to_string(::getpid()));
  std::filesystem::remove_all(store);
  const CommandResult r = run_command(std::string(FENCECHECK_BIN) + " " + GetParam().args + " --store " + store.string());
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find(GetParam().expected), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(store)) << "a refused search must leave nothing behind";
  std::filesystem::remove_all(store);
}

INSTANTIATE_TEST_SUITE_P(
    Budget, BudgetCliBadOption,
    ::testing::Values(BadBudget{"budget --fault bogus", "--fault"},
                      BadBudget{"budget", "--fault is required"},
                      BadBudget{"budget --fault pause-holder --range 5:1", "--range \"5:1\": LO must be below HI"},
                      BadBudget{"budget --fault pause-holder --range 0-100", "--range \"0-100\" must be LO:HI"},
                      BadBudget{"budget --fault pause-holder --nemesis pause-holder", "--nemesis cannot be given to budget"},
                      BadBudget{"budget --fault pause-holder --time-limit 5", "--time-limit cannot be given to budget"},
                      BadBudget{"budget --fault pause-holder --checker bogus", "unknown checker \"bogus\""},
                      BadBudget{"budget --fault partition-holder --runtime local",
                                "this configuration cannot take partition-holder"},
                      BadBudget{"budget --fault pause-after-send", "this configuration cannot take pause-after-send"},
                      BadBudget{"datasheet --faults bogus", "unknown fault \"bogus\""},
                      BadBudget{"datasheet --resource unfenced", "--resource cannot be given to datasheet"},
                      BadBudget{"datasheet --all --shard 2/2", "--shard \"2/2\" must be I/N"}));

}  // namespace
}  // namespace fencecheck::testing
