// The fault registry: names, lookups, and that every fault has a nemesis to run it.
#include <gtest/gtest.h>

#include "nemesis/nemesis.h"
#include "tests/nemesis/fake_env.h"

namespace fencecheck::testing {
namespace {

TEST(FaultRegistry, FindsKnownFaults) {
  for (const char* name : {"pause-holder", "pause-client", "pause-server"}) {
    const FaultInfo* f = find_fault(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->name, name);
    EXPECT_EQ(f->family, "pause");
    EXPECT_FALSE(f->needs_net) << "a pause works under the local runtime";
    EXPECT_FALSE(f->needs_clocks);
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
  EXPECT_EQ(fault_names(), "pause-holder, pause-client, pause-server");
  std::string listed = fault_names();
  for (const auto& f : fault_registry()) EXPECT_NE(listed.find(f.name), std::string::npos) << f.name;
}

TEST(FaultRegistry, EveryFaultsFactoryMakesANemesisThatRunsIt) {
  FakeNemesisEnv env({"c1"}, {"n1"});
  for (const auto& f : fault_registry()) {
    ASSERT_TRUE(f.make) << f.name;
    std::unique_ptr<Nemesis> n = f.make(env.ctx, FaultOptions{});
    ASSERT_NE(n, nullptr) << f.name;
    std::mt19937_64 rng(1);
    n->start(f.name, rng);
    n->on_acquired("c1");
    EXPECT_TRUE(n->active()) << f.name;
    n->heal();
    EXPECT_FALSE(n->active()) << f.name;
  }
  EXPECT_TRUE(env.every_stop_resumed_in_order());
}

}  // namespace
}  // namespace fencecheck::testing
