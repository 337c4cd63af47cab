// Integration tests of the netns runtime: real namespaces, veths, a bridge and iptables.
// Need root; skipped otherwise.
#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include <gtest/gtest.h>

#include "platform/netlink.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/docker/docker_support.h"
#include "tests/runtime/test_util.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

// How long a connect that should work may take: a SYN or ARP request lost on a busy
// machine is sent again after 1 s, then 2 s later. One that works returns at once.
constexpr auto kConnects = 3500ms;

std::vector<std::string> namespaces_of_run(const std::string& run_id) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/run/netns", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("fc-" + run_id + "-", 0) == 0) found.push_back(name);
  }
  return found;
}

std::size_t host_link_count() {
  auto out = os::check_command({"ip", "-o", "link", "show"}, "listing host links");
  return static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
}

// A listening socket created inside node's namespace; it stays there after the thread ends.
int listen_in(Runtime& runtime, const std::string& node, std::uint16_t port) {
  int fd = -1;
  runtime.run_in(node, [&] {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, runtime.node(node).address.c_str(), &addr.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
      throw HarnessError("listen failed: " + os::strerror_string(errno));
    }
  });
  return fd;
}

// A namespace of its own holding a veth pair eth0 / peer0 (both down), removed at the end.
struct ScratchNamespace {
  ScratchNamespace() {
    os::check_command({"ip", "netns", "add", name}, "test setup");
    os::check_command({"ip", "-n", name, "link", "add", "eth0", "type", "veth", "peer", "name", "peer0"}, "test setup");
  }
  ~ScratchNamespace() { ::system(("ip netns del " + name + " 2>/dev/null").c_str()); }
  const std::string name = "fc-" + RunState::new_run_id() + "-nl";
};

class NetnsRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the netns runtime needs root (run ctest with sudo)";
    state_ = std::make_unique<RunState>(RunState::new_run_id());
    runtime_ = make_runtime("netns", state_->run_id(), *state_);
  }
  void TearDown() override {
    if (runtime_) runtime_->destroy();
  }

  std::unique_ptr<RunState> state_;
  std::unique_ptr<Runtime> runtime_;
};

// What every runtime whose nodes have network namespaces of their own must do (netns, and
// docker against the private dockerd ctest starts): cut and heal links, run servers inside.
class NodeNetworkTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the " << GetParam() << " runtime needs root (run ctest with sudo)";
    if (GetParam() == "docker") {
      FC_REQUIRE_DOCKER();
    }
    state_ = std::make_unique<RunState>(RunState::new_run_id());
    runtime_ = make_runtime(GetParam(), state_->run_id(), *state_);
    runtime_->share(tmp_.path(), true);
  }
  void TearDown() override {
    if (runtime_) runtime_->destroy();
  }

  testing::TempDir tmp_;
  std::unique_ptr<RunState> state_;
  std::unique_ptr<Runtime> runtime_;
};

INSTANTIATE_TEST_SUITE_P(Runtimes, NodeNetworkTest, ::testing::Values("netns", "docker"));

TEST_F(NetnsRuntimeTest, NodesGetNamespacesAndDistinctAddressesWithoutTouchingTheHost) {
  std::size_t host_links = host_link_count();
  runtime_->create({"n1", "c1"});
  EXPECT_EQ(runtime_->kind(), "netns");
  const std::string id = state_->run_id();
  auto names = namespaces_of_run(id);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fc-" + id + "-c1", "fc-" + id + "-hub", "fc-" + id + "-n1"}));
  EXPECT_EQ(runtime_->node("n1").netns, "fc-" + id + "-n1");
  EXPECT_NE(runtime_->node("n1").address, runtime_->node("c1").address);
  EXPECT_EQ(runtime_->port("n1", "redis", 6379), 6379);
  EXPECT_EQ(state_->snapshot()["netns"].size(), 3u);
  EXPECT_EQ(host_link_count(), host_links);

  runtime_->destroy();
  EXPECT_TRUE(namespaces_of_run(id).empty());
  EXPECT_TRUE(state_->snapshot()["netns"].empty());
  runtime_->destroy();  // idempotent
}

TEST_P(NodeNetworkTest, PartitionCutsAndHealRestoresTheLink) {
  runtime_->create({"n1", "c1", "c2"});
  const std::string n1 = runtime_->node("n1").address;
  int listener = listen_in(*runtime_, "n1", 7001);
  EXPECT_TRUE(runtime_->tcp_connects("c1", n1, 7001, kConnects));
  EXPECT_FALSE(runtime_->tcp_connects("c1", n1, 7002, 1000ms));  // nobody listens there

  runtime_->cut(complete_grudge({{"n1"}, {"c1"}}), test_deadline());
  EXPECT_FALSE(runtime_->tcp_connects("c1", n1, 7001, 300ms));
  EXPECT_TRUE(runtime_->tcp_connects("c2", n1, 7001, kConnects));  // not named: keeps links

  runtime_->cut(complete_grudge({{"n1", "c1"}, {"c2"}}), test_deadline());  // replaces the earlier partition
  EXPECT_TRUE(runtime_->tcp_connects("c1", n1, 7001, kConnects));
  EXPECT_FALSE(runtime_->tcp_connects("c2", n1, 7001, 300ms));

  runtime_->heal(test_deadline());
  EXPECT_TRUE(runtime_->tcp_connects("c1", n1, 7001, kConnects));
  EXPECT_TRUE(runtime_->tcp_connects("c2", n1, 7001, kConnects));
  ::close(listener);
  EXPECT_THROW(runtime_->cut(complete_grudge({{"n1"}, {"x9"}}), test_deadline()), HarnessError);
}

TEST_P(NodeNetworkTest, AOneWayGrudgeStillCutsTcpBothWays) {
  runtime_->create({"n1", "c1"});
  const std::string n1 = runtime_->node("n1").address;
  int listener = listen_in(*runtime_, "n1", 7001);
  runtime_->cut({{"n1", {"c1"}}}, test_deadline());  // only n1 drops: the SYN-ACK never comes back
  EXPECT_FALSE(runtime_->tcp_connects("c1", n1, 7001, 300ms));
  runtime_->heal(test_deadline());
  EXPECT_TRUE(runtime_->tcp_connects("c1", n1, 7001, kConnects));
  ::close(listener);
}

TEST_P(NodeNetworkTest, SpawnedServerRunsInItsNodeNamespace) {
  if (!os::find_executable("redis-server")) GTEST_SKIP() << "redis-server not installed";
  runtime_->create({"n1", "c1"});
  const std::string n1 = runtime_->node("n1").address;
  Process& redis = runtime_->spawn(
      {"n1", "redis-server",
       {"redis-server", "--port", "7001", "--bind", n1, "--save", "", "--appendonly", "no"},
       {}, tmp_.path() / "nodes/n1/redis-server.log", tmp_.path(), {}});
  runtime_->wait_ready(redis, [&] { return runtime_->tcp_connects("c1", n1, 7001, 200ms); },
                          5000ms);
  runtime_->cut(complete_grudge({{"n1"}, {"c1"}}), test_deadline());
  EXPECT_FALSE(runtime_->tcp_connects("c1", n1, 7001, 300ms));
  runtime_->heal(test_deadline());
  redis.stop(2000ms);
  EXPECT_FALSE(runtime_->tcp_connects("c1", n1, 7001, 300ms));
}

TEST_F(NetnsRuntimeTest, TwoRunsAtOnceDoNotCollide) {
  RunState other_state(RunState::new_run_id());
  auto other = make_runtime("netns", other_state.run_id(), other_state);
  runtime_->create({"n1", "c1"});
  other->create({"n1", "c1"});
  int a = listen_in(*runtime_, "n1", 7001);
  int b = listen_in(*other, "n1", 7001);
  EXPECT_TRUE(runtime_->tcp_connects("c1", runtime_->node("n1").address, 7001, kConnects));
  other->cut(complete_grudge({{"n1"}, {"c1"}}), test_deadline());  // must not affect the first run
  EXPECT_TRUE(runtime_->tcp_connects("c1", runtime_->node("n1").address, 7001, kConnects));
  other->destroy();
  EXPECT_TRUE(namespaces_of_run(other_state.run_id()).empty());
  EXPECT_EQ(namespaces_of_run(state_->run_id()).size(), 3u);
  ::close(a);
  ::close(b);
}

TEST_F(NetnsRuntimeTest, CleanRemovesTheNamespacesOfACrashedRun) {
  std::string id = RunState::new_run_id();
  pid_t controller = testing::fork_child([&] {  // dies without destroying anything
    auto* state = new RunState(id);
    make_runtime("netns", id, *state).release()->create({"n1", "c1"});
  });
  int status = 0;
  ASSERT_EQ(::waitpid(controller, &status, 0), controller);
  ASSERT_EQ(status, 0);
  ASSERT_EQ(namespaces_of_run(id).size(), 3u);
  CleanReport report = clean_runs(id, false);
  EXPECT_TRUE(report.errors.empty()) << report.errors.front();
  EXPECT_EQ(report.removed.size(), 4u);  // three namespaces and the state file
  EXPECT_TRUE(namespaces_of_run(id).empty());
}

// The crash scenario: the controller is SIGKILLed mid-run with a server running on
// a node; its direct child dies by PDEATHSIG, and `clean` removes the rest.
TEST_F(NetnsRuntimeTest, CleanAfterControllerSigkillLeavesNothing) {
  testing::TempDir tmp;
  const auto run_dir = tmp.path() / "run";
  std::filesystem::create_directories(run_dir);
  std::string id = RunState::new_run_id();
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t controller = testing::fork_child([&] {
    auto* state = new RunState(id);
    state->add_path(run_dir);
    auto* runtime = make_runtime("netns", id, *state).release();
    runtime->create({"n1", "c1"});
    // A grandchild does not inherit PDEATHSIG: only clean can end it.
    ProcessSpec spec{"n1", "server", {"sh", "-c", "sleep 60 & echo $! > " + (run_dir / "gc").string() + "; wait"},
                     {}, run_dir / "nodes/n1/server.log", {}, {}};
    int pids[2] = {runtime->spawn(spec).pid(), 0};
    testing::eventually([&] { return testing::file_has_content(run_dir / "gc"); });
    pids[1] = std::stoi(testing::read_text(run_dir / "gc"));
    [[maybe_unused]] auto n = ::write(report[1], pids, sizeof pids);
    ::pause();
  });
  ::close(report[1]);
  int pids[2] = {0, 0};
  ASSERT_EQ(::read(report[0], pids, sizeof pids), static_cast<ssize_t>(sizeof pids));
  ::close(report[0]);
  ASSERT_GT(pids[1], 0);
  ::kill(controller, SIGKILL);
  ::waitpid(controller, nullptr, 0);
  auto gone = [](int pid) {
    char s = os::process_state(pid);
    return s == '\0' || s == 'Z';
  };
  EXPECT_TRUE(testing::eventually([&] { return gone(pids[0]); }));  // PDEATHSIG
  EXPECT_FALSE(gone(pids[1]));
  EXPECT_EQ(namespaces_of_run(id).size(), 3u);

  CleanReport report_lines = clean_runs(id, false);
  EXPECT_TRUE(report_lines.errors.empty()) << report_lines.errors.front();
  EXPECT_TRUE(gone(pids[1]));
  EXPECT_TRUE(namespaces_of_run(id).empty());
  EXPECT_FALSE(std::filesystem::exists(run_dir));
  EXPECT_FALSE(std::filesystem::exists(RunState::state_dir() / (id + ".json")));
}

TEST_F(NetnsRuntimeTest, CleanSweepsNamespacesOfARunWithoutStateFile) {
  std::string id = RunState::new_run_id();
  os::check_command({"ip", "netns", "add", "fc-" + id + "-n1"}, "test setup");
  os::check_command({"ip", "netns", "add", "fc-" + id + "-x"}, "test setup");
  CleanReport report = clean_runs(id, false);
  EXPECT_TRUE(report.errors.empty());
  EXPECT_TRUE(namespaces_of_run(id).empty());
  // Only names matching our exact pattern are touched.
  os::check_command({"ip", "netns", "add", "fc-" + id + "-Not-Ours"}, "test setup");
  clean_runs(id, false);
  EXPECT_EQ(namespaces_of_run(id).size(), 1u);
  os::check_command({"ip", "netns", "del", "fc-" + id + "-Not-Ours"}, "test cleanup");
}

// configure_node_interfaces (netlink.h), which sets up every node of the runtime above,
// on a namespace of the test's own holding both ends of a veth pair.
// A link the kernel has not yet brought up drops what is sent (netlink.h): a connect right
// after create() lost its SYN and waited a second for the resend (CI, 2026-12-04).
TEST_F(NetnsRuntimeTest, CreateReturnsOnceEveryLinkIsUp) {
  // The kernel acts on link changes at most once a second: a run made just before makes
  // this one wait, as when tests or runs start together.
  RunState earlier_state(RunState::new_run_id());
  auto earlier = make_runtime("netns", earlier_state.run_id(), earlier_state);
  earlier->create({"n1", "c1"});
  runtime_->create({"n1", "n2", "n3", "c1", "c2"});
  earlier->destroy();
  const std::string prefix = "fc-" + state_->run_id() + "-";
  std::vector<std::string> namespaces = {"hub", "n1", "n2", "n3", "c1", "c2"};
  for (const std::string& ns : namespaces) {
    std::string links = os::check_command({"ip", "-n", prefix + ns, "-o", "link", "show"}, "listing links");
    std::istringstream lines(links);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(": lo:") != std::string::npos || line.find(": br0:") != std::string::npos) continue;
      EXPECT_NE(line.find(" state UP "), std::string::npos) << ns << ": " << line;
    }
  }
}

TEST_F(NetnsRuntimeTest, AwaitingALinkThatNeverComesUpNamesTheNodeAndItsState) {
  const ScratchNamespace scratch;
  const std::string& ns = scratch.name;
  os::check_command({"ip", "-n", ns, "link", "set", "eth0", "up"}, "test setup");  // its peer stays down
  const std::string path = "/run/netns/" + ns;
  try {
    await_links_up({{"c7", path, "eth0"}}, Deadline::after(200ms));
    ADD_FAILURE() << "no error";
  } catch (const HarnessError& e) {
    EXPECT_EQ(std::string(e.what()), "waiting for the link of node c7: eth0 was not up within 200 ms (its state: lowerlayerdown)");
  }
  os::check_command({"ip", "-n", ns, "link", "set", "peer0", "up"}, "test setup");
  EXPECT_NO_THROW(await_links_up({{"c7", path, "eth0"}, {"c7", path, "peer0"}}, Deadline::after(5s)));
}

TEST_F(NetnsRuntimeTest, NodeInterfacesAreConfiguredOverNetlinkAndFailuresNameTheNode) {
  const ScratchNamespace scratch;
  const std::string& ns = scratch.name;
  const std::string path = "/run/netns/" + ns;
  configure_node_interfaces({{"c7", path, "eth0", "10.199.3.7", 24}});
  const std::string eth0 = os::check_command({"ip", "-n", ns, "-o", "addr", "show", "dev", "eth0"}, "test");
  EXPECT_NE(eth0.find("inet 10.199.3.7/24"), std::string::npos) << eth0;
  auto administratively_up = [&](const std::string& device) {  // "UP" among the <...> flags
    const std::string line = os::check_command({"ip", "-n", ns, "-o", "link", "show", "dev", device}, "test");
    const std::string flags = "," + line.substr(line.find('<') + 1, line.find('>') - line.find('<') - 1) + ",";
    return flags.find(",UP,") != std::string::npos;
  };
  EXPECT_TRUE(administratively_up("lo"));
  EXPECT_TRUE(administratively_up("eth0"));  // with no carrier: its peer is down
  EXPECT_FALSE(administratively_up("peer0")) << "only the device named";

  auto failure = [](const std::vector<NodeInterface>& nodes) {
    try {
      configure_node_interfaces(nodes);
    } catch (const HarnessError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(failure({{"c7", path, "eth0", "10.199.3.7", 24}}),
            "configuring node c7: adding 10.199.3.7/24 to eth0: File exists");
  EXPECT_EQ(failure({{"c8", path, "eth9", "10.199.3.8", 24}}), "configuring node c8: no device eth9 in " + path);
  EXPECT_EQ(failure({{"c9", "/run/netns/fc-no-such-ns", "eth0", "10.199.3.9", 24}}),
            "configuring node c9: cannot enter /run/netns/fc-no-such-ns: No such file or directory");
  EXPECT_EQ(failure({{"c1", path, "eth0", "10.199.3", 24}}), "configuring node c1: \"10.199.3\" is not an IPv4 address");
}

}  // namespace
}  // namespace fencecheck
