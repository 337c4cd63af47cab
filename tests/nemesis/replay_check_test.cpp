// check_replay: a recorded schedule is refused before the run starts when a line names a
// node the run does not have, an action its family cannot replay, a fault not among the
// run's, or lacks a field — each refusal naming the file and the line.
#include "nemesis/fault_registry.h"
#include "nemesis/replay_check.h"

#include <gtest/gtest.h>

#include "platform/errors.h"
#include "tests/nemesis/node_names.h"

namespace fencecheck {
namespace {

using testing::kThreeServers;
using testing::kTwoClients;

ReplayLine line(std::uint64_t n, std::string f, nlohmann::json value) {
  return ReplayLine{std::chrono::milliseconds(10 * n), std::move(f), std::move(value), n};
}

void expect_refused(const std::vector<std::string>& faults, const std::vector<ReplayLine>& lines,
                    std::size_t at_line, const std::string& says) {
  try {
    check_replay(faults, lines, kThreeServers, kTwoClients, default_fault_options(), "run/history.jsonl");
    FAIL() << "accepted; expected a refusal saying " << says;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "run/history.jsonl");
    EXPECT_EQ(e.line(), at_line);
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(ReplayCheck, AnIntactScheduleOfEveryFamilyPasses) {
  std::vector<ReplayLine> lines = {
      line(3, "pause", {{"fault", "pause-server"}, {"targets", {"n2"}}, {"ms", 100}}),
      line(4, "resume", {{"fault", "pause-server"}, {"targets", {"n2"}}}),
      line(5, "partition", {{"fault", "partition-one"}, {"grudge", {{"n1", {"c1", "n2"}}}}}),
      line(6, "heal", {{"fault", "partition-one"}}),
      line(7, "kill", {{"fault", "kill-server"}, {"targets", {"n1", "n3"}}, {"restart_ms", 0}}),
      line(8, "start", {{"fault", "kill-server"}, {"targets", {"n1", "n3"}}}),
      line(9, "clock-bump", {{"fault", "clock-bump"}, {"deltas", {{"n2", 500}}}, {"offsets", {{"n2", 500}}}}),
      line(10, "arm", {{"fault", "pause-holder"}, {"ms", 50}}),
  };
  EXPECT_NO_THROW(check_replay({"pause-server", "pause-holder", "partition-one", "kill-server", "clock-bump"},
                               lines, kThreeServers, kTwoClients, default_fault_options(), "h"));
}

// Clock faults may shift clients (--nemesis-targets clients), and their resets name them.
TEST(ReplayCheck, ClockLinesMayNameClientsButNoStrangers) {
  EXPECT_NO_THROW(check_replay({"clock-bump"},
                               {line(2, "clock-bump", {{"fault", "clock-bump"}, {"deltas", {{"c1", 500}}}}),
                                line(3, "clock-reset", {{"fault", "clock-bump"}, {"targets", {"n1", "c1"}}})},
                               kThreeServers, kTwoClients, default_fault_options(), "h"));
  expect_refused({"clock-bump"}, {line(4, "clock-bump", {{"fault", "clock-bump"}, {"deltas", {{"x9", 500}}}})}, 4,
                 "node \"x9\" is not a node of this run");
}

TEST(ReplayCheck, ANodeTheRunDoesNotHaveIsRefused) {
  expect_refused({"pause-server"},
                 {line(3, "pause", {{"fault", "pause-server"}, {"targets", {"n2"}}, {"ms", 100}}),
                  line(9, "pause", {{"fault", "pause-server"}, {"targets", {"n99"}}, {"ms", 100}})},
                 9, "node \"n99\" is not a server of this run");
  expect_refused({"kill-client"},
                 {line(4, "kill", {{"fault", "kill-client"}, {"targets", {"n1"}}, {"restart_ms", 0}})}, 4,
                 "not a client");
  expect_refused({"partition-halves"},
                 {line(5, "partition", {{"fault", "partition-halves"}, {"grudge", {{"n1", {"x7"}}}}})}, 5,
                 "node \"x7\"");
}

TEST(ReplayCheck, AnActionOrFaultTheRunCannotReplayIsRefused) {
  expect_refused({"pause-server"}, {line(2, "explode", {{"fault", "pause-server"}})}, 2, "cannot replay \"explode\"");
  expect_refused({"pause-server"}, {line(3, "partition", {{"fault", "partition-one"}, {"grudge", nlohmann::json::object()}})},
                 3, "not among this run's faults");
  expect_refused({"pause-server"}, {line(4, "pause", {{"fault", "no-such-fault"}})}, 4, "unknown fault");
}

TEST(ReplayCheck, AMissingFieldIsRefused) {
  expect_refused({"kill-server"}, {line(7, "kill", {{"fault", "kill-server"}, {"targets", {"n1"}}})}, 7,
                 "restart_ms");
  expect_refused({"pause-server"}, {line(8, "pause", {{"fault", "pause-server"}, {"ms", 5}})}, 8, "targets");
}

}  // namespace
}  // namespace fencecheck
