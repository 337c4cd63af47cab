// How long each fault takes to inject and to heal, with real processes under the netns
// runtime (run as root): SIGSTOP until every thread is stopped and SIGCONT; an iptables
// cut of 8 nodes into halves and the flush; a clock offset write; a redis-server SIGKILL
// until gone, and its start until it answers PING again (no persistence, and AOF always).
//   build/bench/nemesis/fault_latency_bench
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <random>

#include "backends/registry.h"
#include "nemesis/clock/node_clocks.h"
#include "nemesis/grudges.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;

struct Bench {
  RunState state{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime = make_runtime("netns", state.run_id(), state);
  fs::path dir = fs::temp_directory_path() / ("fc-fault-bench-" + state.run_id());
  Bench(const std::vector<std::string>& nodes) {
    runtime->create(nodes);
    fs::create_directories(dir);
  }
  ~Bench() {
    runtime->destroy();
    fs::remove_all(dir);
  }
  std::unique_ptr<LockServer> redis(const std::string& persistence) {
    const BackendInfo& b = *find_backend("redis");
    auto s = b.make_server(resolve_backend_options(b, {"persistence=" + persistence}));
    s->setup(*runtime, dir / persistence);
    return s;
  }
};

void BM_PauseAndResume(benchmark::State& st) {
  Bench b({"n1"});
  auto server = b.redis("none");
  for (auto _ : st) {
    if (st.range(0) == 0) {
      server->pause("n1", test_deadline());
      st.PauseTiming();
      server->resume("n1", test_deadline());
      st.ResumeTiming();
    } else {
      st.PauseTiming();
      server->pause("n1", test_deadline());
      st.ResumeTiming();
      server->resume("n1", test_deadline());
    }
  }
}
BENCHMARK(BM_PauseAndResume)->Arg(0)->Arg(1)->ArgNames({"resume"})->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_CutAndHeal(benchmark::State& st) {
  std::vector<std::string> nodes = {"n1", "n2", "n3", "c1", "c2", "c3", "c4", "c5"};
  Bench b(nodes);
  std::mt19937_64 rng(1);
  for (auto _ : st) {
    Grudge g = partition_halves(nodes, rng);
    if (st.range(0) == 0) {
      b.runtime->cut(g, test_deadline());
      st.PauseTiming();
      b.runtime->heal(test_deadline());
      st.ResumeTiming();
    } else {
      st.PauseTiming();
      b.runtime->cut(g, test_deadline());
      st.ResumeTiming();
      b.runtime->heal(test_deadline());
    }
  }
}
BENCHMARK(BM_CutAndHeal)->Arg(0)->Arg(1)->ArgNames({"heal"})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ClockOffset(benchmark::State& st) {
  fs::path dir = fs::temp_directory_path() / "fc-clock-bench";
  NodeClocks clocks("/nonexistent/libfcclock.so", dir, {"n1"});
  std::int64_t ms = 0;
  for (auto _ : st) clocks.set_offset("n1", std::chrono::milliseconds(++ms % 30000), test_deadline());
  fs::remove_all(dir);
}
BENCHMARK(BM_ClockOffset)->Unit(benchmark::kNanosecond);

void BM_KillAndStartRedis(benchmark::State& st) {
  Bench b({"n1"});
  auto server = b.redis(st.range(1) ? "always" : "none");
  for (auto _ : st) {
    if (st.range(0) == 0) {
      server->kill("n1", test_deadline());
      st.PauseTiming();
      server->start("n1");
      st.ResumeTiming();
    } else {
      st.PauseTiming();
      server->kill("n1", test_deadline());
      st.ResumeTiming();
      server->start("n1");
    }
  }
}
BENCHMARK(BM_KillAndStartRedis)
    ->Args({0, 0})->Args({1, 0})->Args({1, 1})->ArgNames({"start", "aof"})
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(20);

}  // namespace
}  // namespace fencecheck

int main(int argc, char** argv) {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "fault_latency_bench needs root (network namespaces)\n");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
