// Times each checker on a synthetic 1,000,000-event history (32 processes, 8 keys), parsing
// included, since `fencecheck check` always parses. "parse-only" runs no checker.
// Reports events/second as the `items_per_second` counter.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "bench/checkers/synthetic_history.h"
#include "checkers/check.h"
#include "checkers/history_reader.h"

namespace {

struct Fixture {
  Fixture() {
    char tmpl[] = "/tmp/fc-bench-XXXXXX";
    dir = ::mkdtemp(tmpl);
    info = fencecheck::bench::write_synthetic_history(dir, 1'000'000, 32, 8, 42);
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
  std::string dir;
  fencecheck::bench::SyntheticHistory info;
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_ParseOnly(benchmark::State& state) {
  auto& f = fixture();
  for (auto _ : state) {
    fencecheck::HistoryReader reader(f.dir + "/history.jsonl");
    fencecheck::Event e;
    std::uint64_t n = 0;
    while (reader.next(e)) ++n;
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * f.info.events));
}

void BM_Checker(benchmark::State& state, const char* name) {
  auto& f = fixture();
  fencecheck::CheckRequest req;
  req.history = f.dir + "/history.jsonl";
  if (std::string(name) == "resource") req.resource = f.dir + "/resource.jsonl";
  req.checkers = {name};
  for (auto _ : state) {
    auto report = fencecheck::run_checks(req);
    if (report.exit_code() != 0) state.SkipWithError("synthetic history judged invalid");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * f.info.events));
}

BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Checker, exclusion, "exclusion")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Checker, tokens, "tokens")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Checker, resource, "resource")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Checker, linearizable, "linearizable")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
