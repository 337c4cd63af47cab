// acquire + release round trips per second through the whole client side: WorkerHandle
// (gRPC over a Unix socket) → worker process → RedisLockClient → redis-server, all on
// 127.0.0.1. Each benchmark thread drives its own worker on its own key.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "backends/redis/redis_lock_client.h"
#include "harness/control/worker_handle.h"
#include "tests/backends/local_processes.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

constexpr int kMaxWorkers = 5;

// Started once, torn down at exit: redis and kMaxWorkers worker processes.
struct Rig {
  Rig() : dir(std::filesystem::temp_directory_path() / ("fc-client-bench-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir);
    RedisClientConfig cfg;
    cfg.host = "127.0.0.1";
    cfg.port = redis.port();
    for (int i = 0; i < kMaxWorkers; ++i) {
      std::string node = "c" + std::to_string(i + 1);
      std::string socket = (dir / (node + ".sock")).string();
      workers.spawn({FC_SERVICES_BIN, "worker", "--socket", socket, "--node", node});
      handles.push_back(std::make_unique<WorkerHandle>(socket));
      handles.back()->wait_connected(10s);
      // No resource calls are made; the address only has to parse.
      handles.back()->setup("redis", cfg.to_json(), "127.0.0.1:1", node);
    }
  }
  ~Rig() {
    handles.clear();
    workers.stop_all();
    std::filesystem::remove_all(dir);
  }
  std::filesystem::path dir;
  testing::RedisProcess redis;
  testing::LocalProcesses workers;
  std::vector<std::unique_ptr<WorkerHandle>> handles;
};

Rig& rig() {
  static Rig r;
  return r;
}

void BM_AcquireRelease(benchmark::State& state) {
  WorkerHandle& w = *rig().handles.at(static_cast<std::size_t>(state.thread_index()));
  const std::string key = "bench-" + std::to_string(state.thread_index());
  for (auto _ : state) {
    WorkerHandle::Completion a = w.invoke(OpFn::kAcquire, key, nullptr, 10s, 2s);
    if (a.type != OpType::kOk) {
      state.SkipWithError(("acquire failed: " + a.error).c_str());
      break;
    }
    WorkerHandle::Completion r = w.invoke(OpFn::kRelease, key, a.ok_value, 0ms, 2s);
    if (r.type != OpType::kOk) {
      state.SkipWithError(("release failed: " + r.error).c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AcquireRelease)->Threads(1)->Threads(kMaxWorkers)->UseRealTime()->MinTime(2.0);

}  // namespace
}  // namespace fencecheck

BENCHMARK_MAIN();
