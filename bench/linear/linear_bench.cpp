// Benchmarks of the linearizable checker (issue 4):
//  (a) BM_MutexMillionEvents: 1,000,000 events, 32 processes, 8 keys, 0.5% info, one
//      search thread; reports check seconds and the peak RSS of the process
//      (run it alone, --benchmark_filter=Million, for a meaningful RSS).
//  (b) BM_OneKey200Ops/<object>: one key, 200 ops, 20 processes, 10 info ops.
//  (c) BM_InfoGrowth/<object>/<info ops>: the same with 0, 5, 10, 20, 40, 80 info ops.
// <object>: 0 = mutex, 1 = register. Times are of observe() + finish() only, not of the
// simulation that produces the events.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <vector>

#include "bench/linear/simulated_history.h"
#include "checkers/linear/linearizable_checker.h"

namespace fencecheck::bench {
namespace {

using Clock = std::chrono::steady_clock;

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void report(benchmark::State& state, const CheckResult& r) {
  if (r.verdict != Verdict::kValid) state.SkipWithError(("expected valid: " + r.summary).c_str());
  state.counters["steps"] = r.stats.value("steps", 0.0);
  state.counters["memo"] = r.stats.value("memo_entries", 0.0);
  state.counters["ops"] = r.stats.value("ops", 0.0);
  state.counters["ops_searched"] = r.stats.value("ops_searched", 0.0);
}

// Arg 0: acquires that find the lock held fail; 1: they wait until it is free (as the
// lock recipes of ZooKeeper and etcd do), which makes long acquires concurrent with many
// holds of others.
void BM_MutexMillionEvents(benchmark::State& state) {
  SimulationConfig cfg;  // defaults: 32 processes, 8 keys, 500,000 ops, 2,500 info
  cfg.blocking_acquire = state.range(0) == 1;
  CheckOptions opts;
  opts.model = "mutex";
  for (auto _ : state) {
    SimulatedHistory history(cfg);
    auto checker = make_linearizable_checker_on_threads(opts, 1);
    Event e;
    double observe_s = 0;
    std::uint64_t events = 0;
    while (history.next(e)) {
      auto t0 = Clock::now();
      checker->observe(e);
      observe_s += std::chrono::duration<double>(Clock::now() - t0).count();
      ++events;
    }
    auto t0 = Clock::now();
    CheckResult r = checker->finish();
    double finish_s = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(observe_s + finish_s);
    state.counters["events"] = static_cast<double>(events);
    state.counters["observe_s"] = observe_s;
    state.counters["finish_s"] = finish_s;
    report(state, r);
  }
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_MutexMillionEvents)->Arg(0)->Arg(1)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

std::vector<Event> one_key_history(SimulationConfig::Object object, std::uint64_t info, std::uint64_t seed) {
  SimulationConfig cfg;
  cfg.object = object;
  cfg.processes = 20;
  cfg.keys = 1;
  cfg.ops = 200;
  cfg.info_ops = info;
  cfg.seed = seed;
  cfg.blocking_acquire = true;  // else most of 20 processes' acquires fail and drop out
  SimulatedHistory history(cfg);
  std::vector<Event> events;
  for (Event e; history.next(e);) events.push_back(e);
  return events;
}

void run_one_key(benchmark::State& state, std::uint64_t info) {
  auto object = state.range(0) == 0 ? SimulationConfig::Object::kMutex : SimulationConfig::Object::kRegister;
  CheckOptions opts;
  opts.model = state.range(0) == 0 ? "mutex" : "register";
  opts.time_limit_s = 20;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Event> events = one_key_history(object, info, seed++);
    state.ResumeTiming();
    auto checker = make_linearizable_checker_on_threads(opts, 1);
    for (const Event& e : events) checker->observe(e);
    CheckResult r = checker->finish();
    report(state, r);
  }
}

void BM_OneKey200Ops(benchmark::State& state) { run_one_key(state, 10); }
BENCHMARK(BM_OneKey200Ops)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_InfoGrowth(benchmark::State& state) { run_one_key(state, static_cast<std::uint64_t>(state.range(1))); }
BENCHMARK(BM_InfoGrowth)
    ->ArgsProduct({{0, 1}, {0, 5, 10, 20, 40, 80, 160}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fencecheck::bench

BENCHMARK_MAIN();
