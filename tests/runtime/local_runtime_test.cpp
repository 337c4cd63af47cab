#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/runtime/test_util.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

class LocalRuntimeTest : public ::testing::Test {
 protected:
  RunState state_{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime_ = make_runtime("local", state_.run_id(), state_);
};

TEST_F(LocalRuntimeTest, EveryNodeIsLoopback) {
  runtime_->create({"n1", "n2", "c1"});
  EXPECT_EQ(runtime_->kind(), "local");
  ASSERT_EQ(runtime_->nodes().size(), 3u);
  for (const auto& n : runtime_->nodes()) {
    EXPECT_EQ(n.address, "127.0.0.1");
    EXPECT_TRUE(n.netns.empty());
  }
  EXPECT_EQ(runtime_->node("n2").name, "n2");
}

TEST_F(LocalRuntimeTest, PortsAreDistinctPerNodeAndServiceAndStable) {
  runtime_->create({"n1", "n2"});
  std::set<std::uint16_t> seen;
  for (const char* node : {"n1", "n2"}) {
    for (const char* service : {"redis", "resource", "peer"}) {
      std::uint16_t p = runtime_->port(node, service, 6379);
      EXPECT_NE(p, 0);
      EXPECT_TRUE(seen.insert(p).second) << node << "/" << service << " reused " << p;
      EXPECT_EQ(runtime_->port(node, service, 6379), p);
    }
  }
}

TEST_F(LocalRuntimeTest, PartitionIsAClearError) {
  runtime_->create({"n1", "c1"});
  EXPECT_FALSE(runtime_offers(*runtime_, Capability::kCutsNetwork));
  try {
    runtime_->cut(complete_grudge({{"n1"}, {"c1"}}), test_deadline());
    FAIL() << "a cut under local did not throw";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("netns runtime"), std::string::npos) << e.what();
  }
}

// A setup step on a node (initdb): done when it exits 0; its failure or a step that does
// not end in time is a HarnessError quoting its log, and nothing of it keeps running.
TEST_F(LocalRuntimeTest, RunToEndSucceedsOrSaysHowTheStepFailed) {
  runtime_->create({"n1"});
  testing::TempDir tmp;
  auto step = [&](std::vector<std::string> argv) {
    return ProcessSpec{"n1", "step", std::move(argv), {}, tmp.path() / "step.log", {}, {}};
  };
  EXPECT_NO_THROW(runtime_->run_to_end(step({"true"}), std::chrono::seconds(5)));
  try {
    runtime_->run_to_end(step({"sh", "-c", "echo no such table >&2; exit 3"}), std::chrono::seconds(5));
    ADD_FAILURE() << "a failed step passed";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("step on node n1 exited with code 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no such table"), std::string::npos) << e.what();
  }
  try {
    runtime_->run_to_end(step({"sleep", "30"}), std::chrono::milliseconds(200));
    ADD_FAILURE() << "a hung step passed";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish within 200 ms"), std::string::npos) << e.what();
  }
  for (Process* p : runtime_->processes()) EXPECT_FALSE(p->alive()) << p->spec().argv[0];
}

TEST(Grudge, CompleteGrudgeCutsEveryPairAcrossComponentsBothWays) {
  Grudge g = complete_grudge({{"n1", "n2"}, {"n3"}, {"c1"}});
  EXPECT_EQ(g["n1"], (std::set<std::string>{"n3", "c1"}));
  EXPECT_EQ(g["n2"], (std::set<std::string>{"n3", "c1"}));
  EXPECT_EQ(g["n3"], (std::set<std::string>{"n1", "n2", "c1"}));
  EXPECT_EQ(g["c1"], (std::set<std::string>{"n1", "n2", "n3"}));
  EXPECT_TRUE(complete_grudge({{"n1", "n2"}})["n1"].empty()) << "one component cuts nothing";
}

TEST_F(LocalRuntimeTest, BadNodeNamesAndUnknownNodesAreErrors) {
  EXPECT_THROW(runtime_->create({"n1", "n1"}), HarnessError);
  EXPECT_THROW(runtime_->create({"N1"}), HarnessError);
  EXPECT_THROW(runtime_->create({"hub"}), HarnessError);
  EXPECT_THROW(runtime_->create({"a-b"}), HarnessError);
  runtime_->create({"n1"});
  EXPECT_THROW(runtime_->node("n9"), HarnessError);
  EXPECT_THROW(runtime_->port("n9", "redis", 1), HarnessError);
  EXPECT_THROW(runtime_->run_in("n9", [] {}), HarnessError);
}

TEST(MakeRuntimeTest, UnknownKindIsAnError) {
  RunState state(RunState::new_run_id());
  try {
    make_runtime("kubernetes", state.run_id(), state);
    FAIL() << "no error for an unknown runtime";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown runtime 'kubernetes': use one of docker, local, netns"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(default_runtime_kind(), ::geteuid() == 0 ? "netns" : "local");
}

TEST(MakeRuntimeTest, NetnsWithoutRootSaysWhatToDo) {
  RunState state(RunState::new_run_id());
  if (::geteuid() != 0) {
    EXPECT_THROW(make_runtime("netns", state.run_id(), state), HarnessError);
    return;
  }
  // As root, check the message from a child that gave root up.
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t child = testing::fork_child([&] {
    std::string message = "no error";
    if (::setresuid(65534, 65534, 65534) == 0) {
      try {
        make_runtime("netns", state.run_id(), state);
      } catch (const HarnessError& e) {
        message = e.what();
      }
    }
    [[maybe_unused]] auto n = ::write(out[1], message.data(), message.size());
  });
  ::close(out[1]);
  std::string message(512, '\0');
  message.resize(static_cast<std::size_t>(std::max<ssize_t>(0, ::read(out[0], message.data(), 512))));
  ::close(out[0]);
  ::waitpid(child, nullptr, 0);
  EXPECT_NE(message.find("needs root"), std::string::npos) << message;
  EXPECT_NE(message.find("--runtime local"), std::string::npos) << message;
}

// The runtime registry is the one declaration of each kind: make_runtime and the run's
// validation follow from it.
TEST(RuntimeRegistry, EachKindIsDeclaredOnceAndMadeFromItsEntry) {
  EXPECT_EQ(runtime_names(), "docker, local, netns, ssh, external");
  using C = Capability;
  auto offers = [](const char* kind, Capability c) {
    const RuntimeInfo* r = find_runtime(kind);
    return r != nullptr && r->offers.has(c);
  };
  ASSERT_NE(find_runtime("local"), nullptr);
  EXPECT_FALSE(offers("local", C::kCutsNetwork));
  EXPECT_FALSE(offers("local", C::kFreezesNodes));
  EXPECT_FALSE(find_runtime("local")->unavailable().has_value());
  EXPECT_TRUE(offers("netns", C::kCutsNetwork));
  EXPECT_TRUE(offers("docker", C::kCutsNetwork));
  EXPECT_TRUE(offers("docker", C::kFreezesNodes));
  EXPECT_TRUE(offers("ssh", C::kCutsNetwork));
  EXPECT_FALSE(offers("ssh", C::kSharesFiles));
  EXPECT_TRUE(offers("ssh", C::kShiftsClocks));
  EXPECT_FALSE(offers("external", C::kRunsServers));
  EXPECT_TRUE(offers("external", C::kCutsNetwork));
  EXPECT_TRUE(offers("netns", C::kRunsServers));
  // Their options reach the run's schema from the entries.
  std::vector<std::string> options;
  for (const auto& spec : runtime_option_specs()) options.push_back(spec.name);
  EXPECT_EQ(options, (std::vector<std::string>{"docker-image", "nodes-file", "endpoints"}));
  EXPECT_EQ(find_runtime("kubernetes"), nullptr);
  for (const RuntimeInfo& r : runtime_registry()) {
    EXPECT_FALSE(r.description.empty()) << r.name;
    EXPECT_TRUE(r.unavailable && r.make) << r.name;
    EXPECT_EQ(r.offers.of(Provider::kRuntime), r.offers) << r.name << " offers only runtime capabilities";
    for (const CapabilityReason& why : r.reasons) {
      EXPECT_FALSE(r.offers.has(why.capability)) << r.name << " says why it lacks what it offers";
      EXPECT_EQ(capability_info(why.capability).provider, Provider::kRuntime) << r.name;
    }
  }
}

}  // namespace
}  // namespace fencecheck
