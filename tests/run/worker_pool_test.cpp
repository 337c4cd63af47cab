// WorkerPool's locking (harness/run/worker_pool.h): every client's op looks its worker up
// under the pool's lock, so nothing slow may happen under it. A spawn that takes long (an
// upload under ssh, a worker joining a frozen container) is made here with a spec
// decorator that waits, on a real local runtime.
#include "harness/run/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/runtime/test_util.h"

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

TEST(WorkerPool, ASlowSpawnHoldsNoLockAnotherClientsOpsNeed) {
  TempDir dir;
  RunState state(RunState::new_run_id());
  std::unique_ptr<Runtime> runtime = make_runtime("local", state.run_id(), state);
  runtime->create({"c1", "c2"});
  std::atomic<bool> entered{false}, release{false};
  runtime->set_spec_decorator([&](ProcessSpec& spec) {
    if (spec.node != "c1") return;
    entered = true;
    for (int i = 0; i < 200 && !release; ++i) std::this_thread::sleep_for(milliseconds(10));  // ≤ 2 s
  });
  WorkerSetup setup{"/bin/true", dir.path(), dir.path() / "nodes", "redis", nlohmann::json::object(), "", {}, {}};
  WorkerPool pool(*runtime, setup, {"c1", "c2"});
  std::thread launcher([&] { pool.launch("c1", Deadline::after(milliseconds(10'000))); });
  while (!entered) std::this_thread::sleep_for(milliseconds(1));
  const auto t = Clock::now();
  EXPECT_EQ(pool.handle("c2"), nullptr);
  EXPECT_EQ(pool.process("c2"), nullptr);
  pool.launch("c1", Deadline::after(milliseconds(10'000)));  // being spawned: a no-op, not a second spawn
  const auto waited = Clock::now() - t;
  release = true;
  launcher.join();
  EXPECT_LT(waited, milliseconds(500)) << "another client's lookup waited for c1's spawn";
  EXPECT_EQ(runtime->processes().size(), 1u) << "c1 was spawned once";
  runtime->destroy();
}

}  // namespace
}  // namespace fencecheck::testing
