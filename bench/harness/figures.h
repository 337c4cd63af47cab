// The figures of harness_bench, apart from the processes that make them: reading
// redis-benchmark's CSV, a redis INFO reply, and a finished `fencecheck run` directory,
// and rendering the rows as a markdown table and as JSON.
//
// Pure functions over text and files: nothing here starts a process or waits for one.
// Reading a run directory reads results.json, config.json and history.jsonl in full (a
// 20 s run at 50 clients: a few hundred thousand lines, about a second). Errors throw
// std::runtime_error saying which file or text and what was wrong with it. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck::bench {

// One result line of `redis-benchmark --csv` (checked against 7.0.15: a header line
// "test","rps","avg_latency_ms",…,"p50_latency_ms",…,"p99_latency_ms","max_latency_ms",
// then one quoted line per test). Columns are found by their header name.
struct RedisBenchmarkFigures {
  double rps = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
};
// The figures of the first test record in output (which may hold other lines too:
// warnings). Quoted fields may span lines: the test name holds the whole command.
// Throws when there is no header with an "rps" column or no line under it.
RedisBenchmarkFigures parse_redis_benchmark_csv(const std::string& output);

// The `calls=` count of cmdstat_<command> in an `INFO commandstats` reply; 0 when the
// command was never called (redis then leaves its line out).
std::uint64_t commandstat_calls(const std::string& info, const std::string& command);

struct Latencies {
  std::size_t count = 0;  // invoke/completion pairs measured
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
};

// What one finished `fencecheck run` directory says.
struct RunFigures {
  std::filesystem::path dir;
  std::string runtime;  // config.json "runtime" ("" when absent)
  double test_seconds = 0;
  double setup_seconds = 0;
  std::optional<double> controller_cpu_seconds;  // absent from older fencecheck builds
  std::uint64_t ok = 0, fail = 0, info = 0;      // health.ops
  bool valid = false;                            // results.json "valid"
  Latencies latency;
};
// Reads dir/results.json (run.*, health.ops.*), dir/config.json and dir/history.jsonl.
// Latency: each client process's invoke is paired with its next completion (ok, fail or
// info); the nemesis (a non-numeric process) and notices are skipped. Throws naming the
// file (and line) that is missing or malformed.
RunFigures read_run(const std::filesystem::path& dir);

// Nearest-rank percentile (0 < q <= 1) of sorted values; 0 for none.
double percentile(const std::vector<double>& sorted, double q);

// One client count: both sides, side by side.
struct Row {
  int clients = 0;
  // redis-benchmark
  std::uint64_t rb_requests = 0;
  double rb_seconds = 0;  // wall time of the measured redis-benchmark run
  RedisBenchmarkFigures rb;
  double rb_incr_share = 0;  // EVALs that took the SET-then-INCR path (INFO commandstats)
  // fencecheck
  int fc_exit = 0;  // the run's exit code: 0 valid, 1 invalid, 2 unknown, 3 error
  RunFigures fc;
  bool kept = false;  // fc.dir survives the bench (--keep)

  bool trustworthy() const { return fc_exit == 0; }
  double fc_ok_per_s() const;
  double ratio() const;  // fencecheck ok ops/s ÷ redis-benchmark req/s
  std::optional<double> cpu_us_per_op() const;  // controller CPU ÷ (ok + fail + info)
};

// The markdown table (header line, rule, one line per row; an untrustworthy row's
// clients cell is marked "N *"), then one note line per row with the details behind it.
std::string markdown(const std::vector<Row>& rows);
// {"rows":[…]} with every figure of each row; null where a figure is not available.
nlohmann::json to_json(const std::vector<Row>& rows);

}  // namespace fencecheck::bench
