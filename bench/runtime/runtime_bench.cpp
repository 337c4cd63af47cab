// How long the netns runtime takes to build and tear down a run's network (needs root),
// and how long Runtime::spawn takes to start and stop a process.
#include <unistd.h>

#include <benchmark/benchmark.h>

#include "platform/run_state.h"
#include "platform/runtime_registry.h"

namespace fencecheck {
namespace {

std::vector<std::string> node_names(int n) {
  std::vector<std::string> names;
  for (int i = 1; i <= n; ++i) {
    std::string name(1, i <= n / 2 ? 'n' : 'c');
    name += std::to_string(i);
    names.push_back(name);
  }
  return names;
}

void BM_NetnsCreateDestroy(benchmark::State& bench) {
  if (::geteuid() != 0) {
    bench.SkipWithError("the netns runtime needs root");
    return;
  }
  for (auto _ : bench) {
    RunState state(RunState::new_run_id());
    auto runtime = make_runtime("netns", state.run_id(), state);
    runtime->create(node_names(static_cast<int>(bench.range(0))));
    if (bench.range(1) == 0) bench.PauseTiming();  // create alone
    runtime->destroy();
    if (bench.range(1) == 0) bench.ResumeTiming();
  }
}
// Args: nodes, whether destroy is timed too.
BENCHMARK(BM_NetnsCreateDestroy)->Args({2, 1})->Args({8, 1})->Args({8, 0})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SpawnAndStop(benchmark::State& bench) {
  RunState state(RunState::new_run_id());
  auto runtime = make_runtime("local", state.run_id(), state);
  runtime->create({"n1"});
  for (auto _ : bench) {
    Process& p = runtime->spawn({"n1", "sleep", {"sleep", "30"}, {}, "/dev/null", {}, {}});
    p.stop(std::chrono::milliseconds(1000));
  }
}
BENCHMARK(BM_SpawnAndStop)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace fencecheck
BENCHMARK_MAIN();
