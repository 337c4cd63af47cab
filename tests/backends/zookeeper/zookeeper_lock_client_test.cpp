// ZooKeeperLockClient against a real ensemble: exclusion under contention, a closed
// session freeing the lock at once, and Kleppmann's K6 premise — a holder paused past its
// session timeout loses the lock without knowing, and learns it only when it runs again.
#include "backends/zookeeper/zookeeper_lock_client.h"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "platform/proc_stat.h"
#include "tests/runtime/test_util.h"
#include "tests/backends/zookeeper/zk_fixture.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using ZooKeeperLockClientTest = testing::ZooKeeperEnsembleTest;

TEST_P(ZooKeeperLockClientTest, ContendingClientsExcludeEachOtherAndTokensGrow) {
  start_ensemble();
  constexpr int kClients = 4, kRounds = 8;
  std::vector<ZooKeeperLockClient*> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(&client(i % 2 ? "c2" : "c1", {{"max_wait_ms", 20000}}));
  std::atomic<int> inside{0}, overlaps{0}, failures{0};
  std::mutex mu;
  std::vector<std::int64_t> tokens;  // in the order the lock was held
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      const std::string node = i % 2 ? "c2" : "c1";
      for (int round = 0; round < kRounds; ++round) {
        LockResult g = on(node, [&] { return clients[i]->acquire("k", 30s); });
        if (g.outcome != Outcome::kOk) {
          ++failures;
          continue;
        }
        if (++inside > 1) ++overlaps;
        {
          std::lock_guard lock(mu);
          tokens.push_back(*g.grant->token);
        }
        std::this_thread::sleep_for(5ms);
        --inside;
        if (on(node, [&] { return clients[i]->release(*g.grant); }).outcome != Outcome::kOk) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
  ASSERT_EQ(tokens.size(), static_cast<std::size_t>(kClients * kRounds));
  for (std::size_t i = 1; i < tokens.size(); ++i) EXPECT_GT(tokens[i], tokens[i - 1]) << "at " << i;
}

// Closing a session deletes its ephemeral nodes at once, long before a timeout would.
TEST_P(ZooKeeperLockClientTest, ClosedSessionFreesTheLockAtOnce) {
  start_ensemble();
  ZooKeeperLockClient& a = client("c1");
  ZooKeeperLockClient& b = client("c2", {{"max_wait_ms", 10000}});
  LockResult ga = on("c1", [&] { return a.acquire("k", 5s); });
  ASSERT_EQ(ga.outcome, Outcome::kOk) << ga.error;
  ASSERT_TRUE(ga.grant->promise);
  EXPECT_EQ(ga.grant->promise->to_json(), nlohmann::json({{"valid_ms", nullptr}, {"bound", "session"}}))
      << "an ephemeral node promises no time";
  LockResult gb;
  std::thread waiter([&] { gb = on("c2", [&] { return b.acquire("k", 10s); }); });
  std::this_thread::sleep_for(300ms);
  auto closed = Clock::now();
  drop_client(a);  // zookeeper_close
  waiter.join();
  ASSERT_EQ(gb.outcome, Outcome::kOk) << gb.error;
  EXPECT_LT(Clock::now() - closed, 2s) << "the lock waited for a session timeout, not the close";
  EXPECT_GT(*gb.grant->token, *ga.grant->token);
}

// Reads exactly n bytes from fd within timeout.
bool read_exact(int fd, void* buf, std::size_t n, std::chrono::milliseconds timeout) {
  auto until = Clock::now() + timeout;
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    pollfd pfd{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&pfd, 1, static_cast<int>(left)) <= 0) return false;
    ssize_t got = ::read(fd, p, n);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

// The holder runs in a child process, so that SIGSTOP freezes it (library threads
// included) the way a long GC pause would.
TEST_P(ZooKeeperLockClientTest, HolderPausedPastItsSessionLosesTheLock) {
  start_ensemble({"session_timeout_ms=4000"});
  const nlohmann::json cfg = server_->client_config();
  int up[2], down[2];
  ASSERT_EQ(::pipe(up), 0);
  ASSERT_EQ(::pipe(down), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    runtime_->run_in("c1", [&] {
      ZooKeeperLockClient holder(ZooKeeperClientConfig::from_json(cfg), "c1");
      LockResult g = holder.acquire("k", 5s);
      std::int64_t token = g.outcome == Outcome::kOk ? *g.grant->token : -1;
      (void)!::write(up[1], &token, sizeof token);
      char go = 0;
      if (g.outcome != Outcome::kOk || ::read(down[0], &go, 1) != 1) ::_exit(1);
      LockResult r = holder.release(*g.grant);
      char out[256] = {};
      out[0] = static_cast<char>(r.outcome);
      std::strncpy(out + 1, r.error.c_str(), sizeof out - 2);
      (void)!::write(up[1], out, sizeof out);
      ::_exit(0);  // skips the close: the session is gone anyway
    });
    ::_exit(2);
  }
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      ::kill(pid, SIGCONT);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  std::int64_t held = -1;
  ASSERT_TRUE(read_exact(up[0], &held, sizeof held, 15s));
  ASSERT_GT(held, 0) << "the child could not take the lock";

  ::kill(pid, SIGSTOP);
  ASSERT_TRUE(testing::eventually([&] { return os::process_stopped(pid); }, 5s));
  auto paused = Clock::now();
  ZooKeeperLockClient& b = client("c2", {{"max_wait_ms", 15000}});
  LockResult gb = on("c2", [&] { return b.acquire("k", 15s); });
  auto waited = Clock::now() - paused;
  ASSERT_EQ(gb.outcome, Outcome::kOk) << gb.error;
  EXPECT_GT(*gb.grant->token, held);
  // Expiry comes between 2/3 T (the last ping before the pause) and T + a tick after it.
  EXPECT_GT(waited, 2s);
  EXPECT_LT(waited, 9s);
  std::cout << "[ zookeeper ] " << GetParam() << ": paused holder's lock taken over after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms\n";

  // Resumed, the holder still believes it holds the lock until it asks the ensemble.
  ::kill(pid, SIGCONT);
  char go = 1;
  ASSERT_EQ(::write(down[1], &go, 1), 1);
  char out[256] = {};
  ASSERT_TRUE(read_exact(up[0], out, sizeof out, 15s));
  EXPECT_EQ(static_cast<Outcome>(out[0]), Outcome::kFail) << (out + 1);
  EXPECT_NE(std::string(out + 1).find("not held"), std::string::npos) << (out + 1);
  for (int fd : {up[0], up[1], down[0], down[1]}) ::close(fd);
  EXPECT_EQ(on("c2", [&] { return b.release(*gb.grant); }).outcome, Outcome::kOk);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ZooKeeperLockClientTest, ::testing::Values("local", "netns"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck
