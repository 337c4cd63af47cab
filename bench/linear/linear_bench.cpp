// Benchmarks of the linearizable checker (issue 4):
//  (a) BM_MutexMillionEvents: 1,000,000 events, 32 processes, 8 keys, 0.5% info, one
//      search thread; reports check seconds and the peak RSS of the process
//      (run it alone, --benchmark_filter=Million, for a meaningful RSS).
//  (b) BM_OneKey200Ops/<object>: one key, 200 ops, 20 processes, 10 info ops.
//  (c) BM_InfoGrowth/<object>/<info ops>: the same with 0, 5, 10, 20, 40, 80 info ops.
//  (d) BM_InvalidRegister/<ops>: one key, 5 processes, a register history of <ops> ops
//      with 6 info writes early on and its last-completing read corrupted to a value
//      never written (issue 7's shape): not linearizable, and the search must exhaust
//      every configuration before that read returns. Reports steps, memo entries and ns
//      per step, whose growth with <ops> is what (d) watches (run one <ops> per process
//      for a meaningful peak RSS).
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
  state.counters["memo_MiB"] = r.stats.value("memo_bytes", 0.0) / (1 << 20);
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

// Issue 7's shape: a correct register history on one key by 5 workers, with 6 info writes
// among its first 100 ops and values in {0, 1} (so every info write's value is read and
// none is left out), then the ok read that completes last made to return 999, which no
// write wrote. Each info write may take effect anywhere after its invoke or never, so the
// search carries up to 2^6 variants of every prefix to the end of the history and steps
// grow linearly with `ops`; the time per step should not.
std::vector<Event> invalid_register_history(std::uint64_t ops, std::uint64_t seed) {
  SimulationConfig cfg;
  cfg.object = SimulationConfig::Object::kRegister;
  cfg.processes = 5;
  cfg.keys = 1;
  cfg.ops = ops;
  cfg.info_ops = 6;
  cfg.info_among_first = 100;
  cfg.register_values = 2;
  cfg.seed = seed;
  SimulatedHistory history(cfg);
  std::vector<Event> events;
  for (Event e; history.next(e);) events.push_back(e);
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (it->f == OpFn::kRead && it->type == OpType::kOk) {
      it->value = "999";
      break;
    }
  }
  return events;
}

void BM_InvalidRegister(benchmark::State& state) {
  std::vector<Event> events = invalid_register_history(static_cast<std::uint64_t>(state.range(0)), 1);
  CheckOptions opts;
  opts.model = "register";
  opts.time_limit_s = 600;
  for (auto _ : state) {
    auto checker = make_linearizable_checker_on_threads(opts, 1);
    auto t0 = Clock::now();
    for (const Event& e : events) checker->observe(e);
    CheckResult r = checker->finish();
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(seconds);
    if (r.verdict != Verdict::kInvalid) state.SkipWithError(("expected invalid: " + r.summary).c_str());
    double steps = r.stats.value("steps", 0.0);
    state.counters["steps"] = steps;
    state.counters["memo"] = r.stats.value("memo_entries", 0.0);
    state.counters["memo_MiB"] = r.stats.value("memo_bytes", 0.0) / (1 << 20);
    state.counters["ns_per_step"] = steps > 0 ? seconds * 1e9 / steps : 0.0;
  }
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_InvalidRegister)
    ->Arg(500)->Arg(1000)->Arg(2000)->Arg(4000)->Arg(8000)
    ->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fencecheck::bench

BENCHMARK_MAIN();
