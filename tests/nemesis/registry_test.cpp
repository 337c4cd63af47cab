// The fault registry: names, lookups, and that every fault has a nemesis to run it.
#include <gtest/gtest.h>

#include "nemesis/fault_registry.h"
#include "tests/nemesis/fake_env.h"

namespace fencecheck::testing {
namespace {

TEST(FaultRegistry, FindsKnownFaults) {
  for (const char* name : {"pause-holder", "pause-client", "pause-server"}) {
    const FaultInfo* f = find_fault(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->name, name);
    EXPECT_EQ(f->family, "pause");
    EXPECT_FALSE(f->needs.has(Capability::kCutsNetwork)) << "a pause works under the local runtime";
    EXPECT_FALSE(f->needs.has(Capability::kShiftsClocks));
    EXPECT_FALSE(f->description.empty());
  }
}

TEST(FaultRegistry, UnknownNamesAreNull) {
  EXPECT_EQ(find_fault("bogus"), nullptr);
  EXPECT_EQ(find_fault(""), nullptr);
  EXPECT_EQ(find_fault("none"), nullptr) << "'none' is RunConfig's word, not a fault";
  EXPECT_EQ(find_fault("Pause-Holder"), nullptr);
}

TEST(FaultRegistry, NamesListEveryFault) {
  EXPECT_EQ(fault_names().rfind("pause-holder, pause-acquirer, pause-after-send, pause-client, pause-server, freeze-client, freeze-server, "
                                "partition-halves", 0), 0u)
      << fault_names();
  std::string listed = fault_names();
  for (const auto& f : fault_registry()) EXPECT_NE(listed.find(f.name), std::string::npos) << f.name;
}

TEST(FaultRegistry, EveryFaultsFactoryMakesANemesisThatRunsIt) {
  FakeNemesisEnv env({"c1", "c2"}, {"n1", "n2", "n3"});
  FaultOptions options = with_pause(std::chrono::milliseconds(100));
  options.set("restart-ms", 100);
  options.set("clock-max-ms", 1000);
  for (const auto& f : fault_registry()) {
    SCOPED_TRACE(f.name);
    ASSERT_TRUE(f.make);
    std::unique_ptr<Nemesis> n = f.make(env.ctx, options);
    ASSERT_NE(n, nullptr);
    std::size_t before = env.records().size();
    std::mt19937_64 rng(1);
    if (f.planned_only) {  // never drawn: only a plan's step (a replayed line) acts
      EXPECT_THROW(n->start(f.name, rng), std::invalid_argument);
      n->replay("partition", {{"fault", f.name}, {"grudge", {{"c1", {"n1"}}, {"n1", {"c1"}}}}});
    } else {
      n->start(f.name, rng);
    }
    env.acquired("c1");
    ASSERT_GT(env.records().size(), before) << "a fault always records what it did";
    const nlohmann::json first = env.records()[before].value;
    EXPECT_EQ(first["fault"], f.name) << "every nemesis line names its fault";
    // Over by the time the acquire above returned: a reset, a restart, a holder's sessions ended.
    bool instant = f.name == "clock-reset" || f.name == "restart-server" || f.name == "kill-session";
    EXPECT_EQ(n->active(), !instant);
    n->heal();
    EXPECT_FALSE(n->active());
  }
  EXPECT_TRUE(env.every_stop_resumed_in_order());
  EXPECT_EQ(env.cuts().back(), Grudge{}) << "the last partition was healed";
}

TEST(FaultRegistry, FamiliesOfListsEachFamilyOnceInRegistryOrder) {
  EXPECT_EQ(families_of({"kill-server", "pause-client", "clock-bump", "pause-holder", "bogus"}),
            (std::vector<std::string>{"pause", "clock", "crash"}));
}

// A fault option's help names the faults that read it, from their registry entries.
TEST(FaultRegistry, AnOptionsHelpNamesTheFaultsThatReadIt) {
  for (const OptionSpec& spec : fault_option_specs()) {
    if (spec.name != "pause-ms") continue;
    EXPECT_NE(spec.help.find("(read by pause-holder, pause-acquirer, pause-after-send, pause-client, pause-server, freeze-client, freeze-server, partition-holder, memory-pressure)"),
              std::string::npos)
        << spec.help;
    return;
  }
  FAIL() << "--pause-ms is not declared with the faults";
}

TEST(FaultRegistry, DefaultOptionsGiveEveryFamilyWhatItReads) {
  FaultOptions o = default_fault_options();
  EXPECT_EQ(o.integer("pause-ms"), 3000);
  EXPECT_EQ(o.integer("restart-ms"), 0);
  EXPECT_EQ(o.integer("clock-max-ms"), 30000);
  EXPECT_EQ(o.integer("clock-min-ms"), 0);
  EXPECT_EQ(o.text("nemesis-targets"), "");
}

}  // namespace
}  // namespace fencecheck::testing
