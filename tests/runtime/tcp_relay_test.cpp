// TcpRelay on the host's loopback (the test makes the listener itself, so no namespace is
// needed): a finished connection's thread is reaped at once, not kept until stop(); a
// failing accept (no file descriptor left) backs off instead of spinning, says so, and
// recovers when descriptors are free again.
#include "platform/tcp_relay.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "platform/os_util.h"
#include "platform/tcp.h"
#include "tests/runtime/test_util.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

// Echoes one connection at a time, in one thread: the target server of the relay.
class SerialEcho {
 public:
  SerialEcho() : listener_(testing::loopback_listener()) {
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{listener_.socket.get(), POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        UniqueFd c(::accept(listener_.socket.get(), nullptr, nullptr));
        char buf[64];
        ssize_t n;
        while (c.valid() && (n = ::read(c.get(), buf, sizeof buf)) > 0) {
          if (::write(c.get(), buf, static_cast<std::size_t>(n)) != n) break;
        }
      }
    });
  }
  ~SerialEcho() {
    stop_ = true;
    thread_.join();
  }
  std::uint16_t port() const { return listener_.port; }

 private:
  testing::LoopbackListener listener_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

testing::LoopbackListener nonblocking_listener() {
  testing::LoopbackListener l = testing::loopback_listener();
  ::fcntl(l.socket.get(), F_SETFL, ::fcntl(l.socket.get(), F_GETFL) | O_NONBLOCK);
  return l;
}

// The process's virtual size in KiB: an exited thread nobody joined keeps its stack mapped.
long vm_size_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmSize:" && (in >> value)) return value;
    in.ignore(1 << 12, '\n');
  }
  return -1;
}

double process_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// One short exchange through the relay: connect, one byte there and back, close.
bool round_trip(std::uint16_t port) {
  UniqueFd c = tcp_connect("127.0.0.1", port, 2s);
  if (!c.valid() || ::send(c.get(), "x", 1, MSG_NOSIGNAL) != 1) return false;
  if (!wait_for_fd(c.get(), POLLIN, std::chrono::steady_clock::now() + 2s)) return false;
  char b = 0;
  return ::read(c.get(), &b, 1) == 1 && b == 'x';
}

TEST(TcpRelay, FinishedConnectionsDoNotKeepTheirThreads) {
  SerialEcho echo;
  testing::LoopbackListener front = nonblocking_listener();
  TcpRelay relay(std::move(front.socket), "127.0.0.1", echo.port());
  ASSERT_TRUE(round_trip(front.port));  // the first thread's stack (and arena) counted in
  eventually([&] { return relay.connection_threads() == 0; }, 200ms);
  const long before = vm_size_kib();
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(round_trip(front.port)) << "connection " << i;
  // Each finished connection is reaped within the acceptor's poll step (100 ms).
  EXPECT_TRUE(eventually([&] { return relay.connection_threads() == 0; }, 1s))
      << relay.connection_threads() << " connection threads still held";
  // Kept threads hold 8 MiB of stack each; 200 of them would be ~1.6 GiB.
  EXPECT_LT(vm_size_kib() - before, 64 * 1024) << "KiB of address space grew over 200 finished connections";
  EXPECT_EQ(relay.accepted(), 201);
}

TEST(TcpRelay, AFailingAcceptBacksOffIsReportedAndRecovers) {
  SerialEcho echo;
  testing::LoopbackListener front = nonblocking_listener();
  TcpRelay relay(std::move(front.socket), "127.0.0.1", echo.port());
  // The client's socket is made first; it connects once every other descriptor is used up
  // under a lowered limit, so that the relay's accept4 fails with EMFILE.
  UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(client.valid());
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fillers;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(front.port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int connected = ::connect(client.get(), reinterpret_cast<sockaddr*>(&to), sizeof to);
  const double cpu_before = process_cpu_seconds();
  std::this_thread::sleep_for(1s);
  const double cpu_used = process_cpu_seconds() - cpu_before;
  const std::string error = relay.accept_error();
  const int accepted_while_full = relay.accepted();
  for (int fd : fillers) ::close(fd);
  ::setrlimit(RLIMIT_NOFILE, &saved);

  ASSERT_EQ(connected, 0) << os::strerror_string(errno);
  EXPECT_EQ(accepted_while_full, 0);
  EXPECT_LT(cpu_used, 0.1) << "seconds of CPU in 1 s while accept4 failed (a spin uses ~1)";
  EXPECT_NE(error.find("Too many open files"), std::string::npos) << error;
  // Descriptors free again: the queued connection is taken within the back-off (≤ 1 s).
  EXPECT_TRUE(eventually([&] { return relay.accepted() == 1; }, 3s));
  EXPECT_TRUE(eventually([&] { return relay.accept_error().empty(); }, 1s)) << relay.accept_error();
  ASSERT_EQ(::send(client.get(), "y", 1, MSG_NOSIGNAL), 1);
  ASSERT_TRUE(wait_for_fd(client.get(), POLLIN, std::chrono::steady_clock::now() + 2s));
  char b = 0;
  EXPECT_EQ(::read(client.get(), &b, 1), 1);
  EXPECT_EQ(b, 'y');
}

}  // namespace
}  // namespace fencecheck
