// The memory family (memory-pressure) against a recording env: it fills a server for
// --pause-ms, records the start and, once the time is up, what the fill did; a server that
// is down is recorded not applied; heal ends it at once; a recorded line replays it.
#include "nemesis/memory_nemesis.h"

#include <gtest/gtest.h>

#include "nemesis/fault_registry.h"
#include "tests/nemesis/fake_env.h"
#include "tests/nemesis/node_names.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;

class MemoryFixture : public ::testing::Test {
 protected:
  FakeNemesisEnv env{kFiveClients, {"n1"}};
  MemoryNemesis nemesis{env.ctx, default_fault_options()};
  std::mt19937_64 rng{1};
};

TEST_F(MemoryFixture, FillsTheServerForPauseMsAndRecordsWhatItDid) {
  nemesis.start("memory-pressure", rng);
  ASSERT_EQ(env.records().size(), 1u);
  EXPECT_EQ(env.records()[0].f, "memory-pressure");
  EXPECT_EQ(env.records()[0].value,
            nlohmann::json({{"fault", "memory-pressure"}, {"targets", {"n1"}}, {"ms", 3000}}));
  EXPECT_TRUE(nemesis.active());
  EXPECT_EQ(nemesis.describe_active(), std::vector<std::string>{"memory-pressure n1"});
  ASSERT_TRUE(nemesis.due().has_value());
  nemesis.tick();
  EXPECT_EQ(env.records().size(), 1u) << "not yet: --pause-ms has not passed";
  env.time.advance(3000ms);
  nemesis.tick();
  ASSERT_EQ(env.records().size(), 2u);
  EXPECT_EQ(env.records()[1].f, "memory-relieved");
  EXPECT_EQ(env.records()[1].value, nlohmann::json({{"fault", "memory-pressure"},
                                                    {"targets", {"n1"}},
                                                    {"stored", 100},
                                                    {"refused", 0},
                                                    {"evictions", 7}}));
  EXPECT_EQ(env.pressed(), std::vector<std::string>{"n1"});
  EXPECT_FALSE(nemesis.active());
  EXPECT_FALSE(nemesis.due().has_value());
}

TEST_F(MemoryFixture, ADownServerIsRecordedNotApplied) {
  env.ctx.servers.kill("n1", Deadline::after(1s));
  nemesis.start("memory-pressure", rng);
  nemesis.heal();
  ASSERT_EQ(env.records().size(), 2u);
  EXPECT_EQ(env.records()[1].value.value("not_applied", ""), "the server was down or paused");
  EXPECT_FALSE(nemesis.active());
  nemesis.heal();
  EXPECT_EQ(env.records().size(), 2u) << "heal is idempotent";
}

TEST_F(MemoryFixture, ReplaysARecordedFill) {
  nemesis.replay("memory-pressure", {{"fault", "memory-pressure"}, {"targets", {"n1"}}, {"ms", 500}});
  nemesis.replay("memory-relieved", {{"fault", "memory-pressure"}, {"targets", {"n1"}}});
  EXPECT_EQ(env.records().size(), 1u) << "the end follows by itself";
  env.time.advance(500ms);
  nemesis.tick();
  EXPECT_EQ(env.records().back().f, "memory-relieved");
  EXPECT_THROW(nemesis.replay("pause", {{"fault", "memory-pressure"}}), std::invalid_argument);
}

TEST(MemoryFault, IsRegisteredReadingPauseMs) {
  const FaultInfo* f = find_fault("memory-pressure");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->family, "memory");
  EXPECT_TRUE(f->self_timed);
  EXPECT_EQ(f->needs, (Capabilities{Capability::kRunsServers, Capability::kEvictsKeys}));
}

}  // namespace
}  // namespace fencecheck::testing
