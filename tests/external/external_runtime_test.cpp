// The external runtime over real namespaces: a server on the host's loopback (a TCP echo
// the test runs) is reached from a client node through the controller's relay; a cut of the
// client from the outside server node stops it both ways, in the client's namespace only,
// and heal brings it back; destroy leaves no namespace or relay behind.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "platform/external_runtime.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "platform/tcp.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

// A TCP echo server on 127.0.0.1 in the host's namespace: what a user's server is to the run.
class EchoServer {
 public:
  EchoServer() : port_(free_loopback_port()) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port_);
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0) {
      throw HarnessError("echo server: " + os::strerror_string(errno));
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~EchoServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  void serve() {
    std::vector<std::thread> conns;
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      conns.emplace_back([this, c] {
        char buf[256];
        while (!stop_) {
          pollfd q{c, POLLIN, 0};
          if (::poll(&q, 1, 50) <= 0) continue;
          ssize_t n = ::read(c, buf, sizeof buf);
          if (n <= 0 || ::write(c, buf, static_cast<std::size_t>(n)) != n) break;
        }
        ::close(c);
      });
    }
    for (auto& t : conns) t.join();
  }
  std::uint16_t port_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Sends "ping" from inside node `from` to address:port and returns what came back within 1 s.
std::string exchange_from(Runtime& rt, const std::string& from, const std::string& address, std::uint16_t port) {
  std::string got;
  rt.run_in(from, [&] {
    UniqueFd fd = tcp_connect(address, port, 1000ms);
    if (!fd.valid()) return;
    if (::send(fd.get(), "ping", 4, MSG_NOSIGNAL) != 4) return;
    if (!wait_for_fd(fd.get(), POLLIN, std::chrono::steady_clock::now() + 1000ms)) return;
    char buf[16];
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) got.assign(buf, static_cast<std::size_t>(n));
  });
  return got;
}

class ExternalRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the external runtime needs root (run ctest with sudo)";
    state_ = std::make_unique<RunState>(RunState::new_run_id());
    OptionValues opts;
    opts.set("endpoints", "redis=127.0.0.1:" + std::to_string(echo_.port()));
    runtime_ = make_runtime("external", state_->run_id(), *state_, opts);
    runtime_->create({"n1", "r1", "c1", "c2"});
  }
  void TearDown() override {
    if (runtime_) runtime_->destroy();
  }
  std::string relay() const { return runtime_->node("n1").address; }

  EchoServer echo_;
  std::unique_ptr<RunState> state_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(ExternalRuntimeTest, AClientReachesTheOutsideServerThroughTheRelay) {
  EXPECT_EQ(exchange_from(*runtime_, "c1", relay(), echo_.port()), "ping");
  EXPECT_EQ(exchange_from(*runtime_, "c2", relay(), echo_.port()), "ping");
  // The server node has no namespace of its own: nothing can run on it.
  EXPECT_TRUE(runtime_->node("n1").netns.empty());
  ProcessSpec spec;
  spec.node = "n1";
  spec.name = "nothing";
  spec.argv = {"/bin/true"};
  EXPECT_THROW(runtime_->spawn(spec), HarnessError);
}

TEST_F(ExternalRuntimeTest, ACutFromTheServerNodeIsMadeInTheClientBothWaysAndHealed) {
  runtime_->cut(complete_grudge({{"c1"}, {"n1"}}), test_deadline());
  EXPECT_EQ(exchange_from(*runtime_, "c1", relay(), echo_.port()), "") << "c1 is cut from n1";
  EXPECT_EQ(exchange_from(*runtime_, "c2", relay(), echo_.port()), "ping") << "c2 is not";
  // Both directions: c1 sends nothing to the relay (OUTPUT) and takes nothing from it (INPUT).
  const std::string rules = os::check_command({"nsenter", "--net=/run/netns/" + runtime_->node("c1").netns, "--", "iptables-save"},
                            "reading c1's rules");
  EXPECT_NE(rules.find("-A INPUT -s " + relay() + "/32 -j DROP"), std::string::npos) << rules;
  EXPECT_NE(rules.find("-A OUTPUT -d " + relay() + "/32 -j DROP"), std::string::npos) << rules;
  runtime_->heal(test_deadline());
  EXPECT_EQ(exchange_from(*runtime_, "c1", relay(), echo_.port()), "ping");
}

TEST_F(ExternalRuntimeTest, DestroyRemovesTheNamespacesAndStopsTheRelay) {
  const std::string hub = "fc-" + state_->run_id() + "-hub";
  runtime_->destroy();
  EXPECT_FALSE(std::filesystem::exists("/run/netns/" + hub));
  EXPECT_FALSE(std::filesystem::exists("/run/netns/fc-" + state_->run_id() + "-c1"));
  runtime_.reset();
}

TEST(ExternalRuntimeOptions, EndpointsAreCheckedBeforeAnythingIsMade) {
  EXPECT_EQ(parse_endpoints("redis=127.0.0.1:6379").servers.size(), 1u);
  auto e = parse_endpoints("redlock=10.0.0.1:7000,10.0.0.2:7001,10.0.0.3:7002");
  EXPECT_EQ(e.backend, "redlock");
  ASSERT_EQ(e.servers.size(), 3u);
  EXPECT_EQ(e.servers[2].address, "10.0.0.3");
  EXPECT_EQ(e.servers[2].port, 7002);
  for (const char* bad : {"127.0.0.1:6379", "=127.0.0.1:1", "redis=localhost:6379", "redis=127.0.0.1",
                          "redis=127.0.0.1:0", "redis=127.0.0.1:70000", "redis=127.0.0.1:63x", "redis=1.2.3.4:5,"}) {
    EXPECT_THROW(parse_endpoints(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace fencecheck
