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
    EXPECT_EQ(f->nemesis, "pause");
    EXPECT_FALSE(f->needs_partitions) << "a pause works under the local runtime";
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

TEST(FaultRegistry, EveryFaultHasANemesis) {
  FakeNemesisEnv env({"c1"}, {"n1"});
  for (const auto& f : fault_registry()) {
    EXPECT_NE(make_nemesis(f.nemesis, env, NemesisOptions{}), nullptr) << f.name;
  }
  EXPECT_EQ(make_nemesis("bogus", env, NemesisOptions{}), nullptr);
}

}  // namespace
}  // namespace fencecheck::testing
