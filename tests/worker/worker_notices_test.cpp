// pause-after-send through the worker (label `unit`: no servers): WorkerHandle → a real
// `fencecheck worker` process → its adapter, the deliberately broken one
// (tests/adapters/broken) standing in for a library that pauses, or never does, when asked.
// What the controller gets: a "paused" Notice with the key and ms, and the acquire's
// Completion::paused_after_send saying whether it paused.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/registry.h"
#include "harness/control/worker_handle.h"
#include "ops/ops.h"
#include "tests/adapters/broken/broken_adapter.h"
#include "tests/backends/local_processes.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kDeadline = 5000ms;
constexpr auto kPause = 300ms;

class WorkerPauseNotices : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "/usr/bin/python3 is missing";
    char tmpl[] = "/tmp/fc-worker-notices-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override {
    handle_.reset();
    processes_.stop_all();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // A worker whose lock client is the adapter "redis-py", found in an adapters folder of the
  // test's where its `run` is the broken adapter in `mode`; its notices are kept.
  WorkerHandle& start_worker(const std::string& mode) {
    const AdapterInfo* a = find_adapter("redis-py");  // any adapter: only its program is used
    testing::write_broken_adapter(dir_ / "adapters" / a->name / "run", FENCECHECK_SOURCE_DIR, mode);
    const std::string socket = (dir_ / "c1.sock").string();
    ProcessSpec spec;
    spec.node = "t1";
    spec.name = "worker";
    spec.argv = {FC_SERVICES_BIN, "worker", "--socket", socket, "--node", "c1"};
    spec.log = dir_ / "worker.log";
    spec.env["FENCECHECK_ADAPTERS_DIR"] = (dir_ / "adapters").string();
    processes_.runtime().spawn(std::move(spec));
    handle_ = std::make_unique<WorkerHandle>(socket);
    handle_->wait_connected(10s);
    WorkerHandle::ClientChoice client;
    client.name = a->name;
    client.adapter_log = (dir_ / "adapter.log").string();
    client.op_timeout = kDeadline;
    handle_->setup(a->backends.front(), {{"host", "127.0.0.1"}, {"port", 1}}, "127.0.0.1:1", "c1", client);
    handle_->watch_notices([this](const WorkerHandle::Notice& n) {
      std::lock_guard lock(mu_);
      notices_.push_back(n);
      arrived_.push_back(std::chrono::steady_clock::now());
      cv_.notify_all();
    });
    return *handle_;
  }
  WorkerHandle::Completion acquire(const std::string& key, std::chrono::milliseconds pause) {
    return handle_->invoke(OpFn::kAcquire, key, nullptr, 5s, kDeadline, std::nullopt, pause);
  }
  // The notices once there are n of them, or after `wait` (fewer then).
  std::vector<WorkerHandle::Notice> notices(std::size_t n, std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, wait, [&] { return notices_.size() >= n; });
    return notices_;
  }

  fs::path dir_;
  testing::LocalProcesses processes_;
  std::unique_ptr<WorkerHandle> handle_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<WorkerHandle::Notice> notices_;
  std::vector<std::chrono::steady_clock::time_point> arrived_;  // of each notice
};

TEST_F(WorkerPauseNotices, APauseIsANoticeWithKeyAndMsAndTheAcquireSaysItPaused) {
  start_worker("pause");
  WorkerHandle::Completion c = acquire("k", kPause);
  const auto completed = std::chrono::steady_clock::now();
  ASSERT_EQ(c.type, OpType::kOk) << c.error;
  ASSERT_TRUE(c.paused_after_send.has_value()) << "the worker answered: it must say whether it paused";
  EXPECT_EQ(*c.paused_after_send, kPause);
  std::vector<WorkerHandle::Notice> n = notices(1, 2s);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].f, "paused");
  EXPECT_EQ(n[0].key, "k");
  EXPECT_EQ(n[0].ms, kPause);
  EXPECT_EQ(n[0].lease, "");
  {
    // Two streams, no order promised between them; the pause usually separates them.
    std::lock_guard lock(mu_);
    std::cout << "the paused notice came "
              << std::chrono::duration_cast<std::chrono::microseconds>(completed - arrived_[0]).count() / 1000.0
              << " ms before the acquire's completion (pause " << kPause.count() << " ms)\n";
  }
  // An acquire that asked for no pause says nothing about one.
  WorkerHandle::Completion plain = acquire("k2", 0ms);
  ASSERT_EQ(plain.type, OpType::kOk) << plain.error;
  EXPECT_FALSE(plain.paused_after_send.has_value());
  EXPECT_EQ(notices(2, 300ms).size(), 1u);
}

TEST_F(WorkerPauseNotices, AnArmedAcquireWhoseLibraryNeverPausedSaysSoAndNoNoticeComes) {
  start_worker("no-pause");
  WorkerHandle::Completion c = acquire("k", kPause);
  ASSERT_EQ(c.type, OpType::kOk) << c.error;
  ASSERT_TRUE(c.paused_after_send.has_value());
  EXPECT_EQ(*c.paused_after_send, 0ms) << "no paused event: no pause";
  EXPECT_TRUE(notices(1, 500ms).empty());
}

// The adapter broke after its pause began: the op is INFO broken, and still says it paused,
// as the notice already did.
TEST_F(WorkerPauseNotices, ABrokenAdapterThatPausedStillSaysItPaused) {
  start_worker("pause-twice");
  WorkerHandle::Completion c = acquire("k", kPause);
  EXPECT_EQ(c.type, OpType::kInfo);
  EXPECT_NE(c.broken.find("sent a second paused event in one acquire"), std::string::npos) << c.broken;
  ASSERT_TRUE(c.paused_after_send.has_value());
  EXPECT_EQ(*c.paused_after_send, kPause);
  std::vector<WorkerHandle::Notice> n = notices(1, 2s);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].f, "paused");
}

}  // namespace
}  // namespace fencecheck
