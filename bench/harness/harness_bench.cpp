// harness_bench: how close `fencecheck run` gets to what redis itself serves, on the same
// work: one Lua EVAL round trip per op. For each client count N it runs, in turn,
//   1. redis-benchmark -c N against a private redis-server (started once, on a free
//      loopback port, in a temp dir), EVALing fencecheck's own acquire script, ~5 s;
//   2. fencecheck run --backend redis --workload lock --hold-ms 0 --keys N --concurrency N
//      --nemesis none, for --seconds,
// and prints both side by side (figures.h renders the table). See README.md here.
//
// Processes are started through the platform's local runtime (platform/runtime.h): each
// leads its own process group, dies with this program (PR_SET_PDEATHSIG), is recorded in a
// run-state file that `fencecheck clean` reads should this program be SIGKILLed, and is
// stopped on every way out. Ctrl-C or SIGTERM: redis-benchmark is stopped at once; the
// fencecheck run gets each signal forwarded as SIGINT and is waited for (≤ 120 s), so
// that it tears down its own namespaces and servers; then everything made here is removed
// and the rows measured so far are printed. Exit: 0 all rows valid, 1 some run was not
// valid (its row is marked), 2 bad options, 3 a step failed, 130 interrupted.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/redis/redis_lock_client.h"
#include "bench/harness/figures.h"
#include "bench/harness/options.h"
#include "platform/errors.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "platform/stop_signals.h"
#include "platform/tcp.h"
#include "tests/support/deadline.h"

namespace fencecheck::bench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono;

// redis-benchmark's keys: l:<id>/f:<id> with id drawn from this many, leased for
// kLeaseMs. fencecheck's lock workload at --hold-ms 0 releases each grant at once, so its
// acquires nearly all take the SET-then-INCR path; random ids over a large space with a
// 1 ms lease do the same here (a key is almost never still held when drawn again), where
// -r N with a 1000 ms lease would make nearly every EVAL a refused SET.
constexpr int kKeySpace = 100000;
constexpr int kLeaseMs = 1;
constexpr double kTargetBenchmarkSeconds = 5;
constexpr auto kInterruptGrace = seconds(120);  // for a fencecheck run to clean up after Ctrl-C

std::atomic<int> g_stops{0};
void count_stop(int) { g_stops.fetch_add(1); }

std::string read_all(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int exit_code(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

class Bench {
 public:
  Bench(const Options& o, fs::path tmp, Runtime& rt) : o_(o), tmp_(std::move(tmp)), rt_(rt) {}

  // Starts the private redis-server and waits (≤ 10 s) until it answers PING. Throws
  // HarnessError quoting its log if it exits or stays silent, Interrupted on Ctrl-C.
  void start_redis() {
    port_ = rt_.port("n1", "redis", 6379);
    fs::create_directories(tmp_ / "redis");
    Process& p = rt_.spawn({"n1", "redis-server",
                            {"redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--daemonize", "no", "--dir", (tmp_ / "redis").string()},
                            {}, tmp_ / "redis" / "redis-server.log", {}, {}});
    rt_.wait_ready(
        p,
        [&] {
          auto reply = tcp_exchange("127.0.0.1", port_, "PING\r\nQUIT\r\n", milliseconds(500));
          return reply && reply->rfind("+PONG", 0) == 0;
        },
        seconds(10));
  }

  // Both sides for one client count. Blocks ~5 s (redis-benchmark, plus a short
  // calibration run) + --seconds + fencecheck's setup, checks and teardown. Throws
  // HarnessError for a step that failed, Interrupted on Ctrl-C (after the child is gone).
  Row measure(int clients) {
    Row row;
    row.clients = clients;
    std::uint64_t n = o_.requests.value_or(0);
    if (n == 0) {
      progress(clients, "calibrating redis-benchmark");
      auto cal_n = std::max<std::uint64_t>(10000, 200 * static_cast<std::uint64_t>(clients));
      double rps = redis_benchmark(clients, cal_n, "calibrate").rps;
      n = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::llround(rps * kTargetBenchmarkSeconds)), 1000,
                                    1000000000);
    }
    redis("FLUSHALL\r\nCONFIG RESETSTAT\r\n");
    progress(clients, "redis-benchmark -n " + std::to_string(n));
    auto t0 = steady_clock::now();
    row.rb = redis_benchmark(clients, n, "measure");
    row.rb_seconds = duration<double>(steady_clock::now() - t0).count();
    row.rb_requests = n;
    const std::string info = redis("INFO commandstats\r\n");
    std::uint64_t evals = commandstat_calls(info, "eval");
    row.rb_incr_share = evals ? static_cast<double>(commandstat_calls(info, "incr")) / static_cast<double>(evals) : 0;

    progress(clients, "fencecheck run for " + seconds_text() + " s");
    const fs::path store = o_.keep.empty() ? tmp_ / "store" : o_.keep;
    const std::string name = "bench-c" + std::to_string(clients);
    const std::set<fs::path> before = run_dirs(store / name);
    const std::string n_text = std::to_string(clients);
    const fs::path log = tmp_ / (name + ".log");
    row.fc_exit = run_child({"c1", "fencecheck run",
                             {o_.fencecheck.string(), "run", "--backend", "redis", "--workload", "lock", "--hold-ms",
                              "0", "--keys", n_text, "--concurrency", n_text, "--nemesis", "none", "--time-limit",
                              seconds_text(), "--store", store.string(), "--name", name, "--seed", "1"},
                             {}, log, {}, {}},
                            seconds(600) + duration_cast<seconds>(duration<double>(2 * o_.seconds)), true);
    std::vector<fs::path> made;
    for (const fs::path& d : run_dirs(store / name)) {
      if (!before.count(d)) made.push_back(d);
    }
    if (made.size() != 1) {
      throw HarnessError("fencecheck run exited " + std::to_string(row.fc_exit) + " and made " +
                         std::to_string(made.size()) + " run directories under " + (store / name).string() +
                         " (expected 1); last lines of " + log.string() + ":\n" + os::file_tail(log.string()));
    }
    try {
      row.fc = read_run(made.front());
    } catch (const std::runtime_error& e) {
      throw HarnessError("fencecheck run exited " + std::to_string(row.fc_exit) + ": " + e.what() +
                         "\nlast lines of " + log.string() + ":\n" + os::file_tail(log.string()));
    }
    row.kept = !o_.keep.empty();
    return row;
  }

 private:
  static void progress(int clients, const std::string& what) {
    std::cerr << "harness_bench: " << clients << " clients: " << what << "\n";
  }
  std::string seconds_text() const {
    std::ostringstream s;
    s << o_.seconds;
    return s.str();
  }

  // Sends inline commands (each ending in CRLF) and QUIT; returns the replies. ≤ 5 s.
  std::string redis(const std::string& commands) {
    auto reply = tcp_exchange("127.0.0.1", port_, commands + "QUIT\r\n", seconds(5));
    if (!reply) throw HarnessError("the private redis-server on port " + std::to_string(port_) + " did not answer");
    return *reply;
  }

  RedisBenchmarkFigures redis_benchmark(int clients, std::uint64_t n, const std::string& what) {
    const fs::path log = tmp_ / ("redis-benchmark-c" + std::to_string(clients) + "-" + what + ".log");
    const std::string c = std::to_string(clients);
    int code = run_child({"c1", "redis-benchmark",
                          {"redis-benchmark", "-h", "127.0.0.1", "-p", std::to_string(port_), "-c", c, "-n",
                           std::to_string(n), "-r", std::to_string(kKeySpace), "--csv", "EVAL", kRedisAcquireScript, "2",
                           "l:__rand_int__", "f:__rand_int__", "owner", std::to_string(kLeaseMs)},
                          {}, log, {}, {}},
                         seconds(600), false);
    const std::string out = read_all(log);
    if (code != 0) {
      throw HarnessError("redis-benchmark exited " + std::to_string(code) + "; last lines of " + log.string() +
                         ":\n" + os::file_tail(log.string()));
    }
    try {
      return parse_redis_benchmark_csv(out);
    } catch (const std::runtime_error& e) {
      throw HarnessError(std::string(e.what()) + "; last lines of " + log.string() + ":\n" +
                         os::file_tail(log.string()));
    }
  }

  // Starts spec and waits for it to exit; returns its exit code (128 + signal if killed).
  // Polls every 50 ms: blocks while the child runs, at most `limit` (then it is stopped
  // and HarnessError thrown). On Ctrl-C/SIGTERM: with forward, each signal is passed on as
  // SIGINT and the wait goes on (≤ kInterruptGrace, then the child is killed); without,
  // the child is stopped at once. Either way Interrupted is thrown once it is gone.
  int run_child(ProcessSpec spec, seconds limit, bool forward) {
    const std::string name = spec.name;
    if (g_stops.load() > 0) throw Interrupted("before " + name + " started");
    Process& p = rt_.spawn(std::move(spec));
    const auto start = steady_clock::now();
    steady_clock::time_point first_stop;
    int forwarded = 0;
    while (p.alive()) {
      const auto now = steady_clock::now();
      if (const int stops = g_stops.load(); stops > forwarded) {
        if (!forward) {
          p.stop(seconds(1));
          throw Interrupted(name + " stopped");
        }
        if (forwarded == 0) {
          first_stop = now;
          std::cerr << "harness_bench: interrupted: passing it on to " << name << " and waiting for it to clean up\n";
        }
        for (; forwarded < stops; ++forwarded) p.signal(SIGINT, test_deadline());
      }
      if (forwarded > 0 && now - first_stop > kInterruptGrace) {
        p.stop(seconds(5));
        throw HarnessError(name + " did not end within 120 s of the interrupt and was killed: run `" +
                           o_.fencecheck.string() + " clean` for what it left");
      }
      if (forwarded == 0 && now - start > limit) {
        p.stop(seconds(5));
        throw HarnessError(name + " was still running after " + std::to_string(limit.count()) +
                           " s and was stopped; last lines of its log:\n" + p.log_tail());
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    const int code = exit_code(p.exit_status().value_or(0));
    const std::string how = p.describe_exit();
    p.stop(milliseconds(0));  // reaps it
    if (forwarded > 0 || g_stops.load() > 0) throw Interrupted(name + " " + how + " after the interrupt");
    return code;
  }

  // The run directories under store/name (directories only).
  static std::set<fs::path> run_dirs(const fs::path& dir) {
    std::set<fs::path> dirs;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.is_directory() && !e.is_symlink()) dirs.insert(e.path());
    }
    return dirs;
  }

  const Options& o_;
  fs::path tmp_;
  Runtime& rt_;
  std::uint16_t port_ = 0;
};

// The lines above the table: what was measured and how to read it.
std::string header(const Options& o, const std::string& redis_version) {
  std::ostringstream h;
  h << "harness_bench: fencecheck run vs redis-benchmark, one Lua EVAL round trip per op\n\n"
    << "- fencecheck (" << o.fencecheck.string() << "): run --backend redis --workload lock --hold-ms 0 "
    << "--keys N --concurrency N --nemesis none --time-limit " << o.seconds << " --seed 1. "
    << "ok ops/s = health.ops.ok / run.test_seconds: acquires and releases, one EVAL each; a refused "
    << "acquire is a fail, not counted (no back-off at --hold-ms 0)\n"
    << "- redis-benchmark (private redis-server " << redis_version << " on loopback): -c N EVAL of "
    << "fencecheck's acquire script (kRedisAcquireScript, backends/redis/redis_lock_client.cpp) on keys "
    << "l:/f:__rand_int__ with -r " << kKeySpace << " and PX " << kLeaseMs << " ms, so that nearly every "
    << "EVAL takes the SET-then-INCR path as fencecheck's acquires do (--hold-ms 0 releases at once); "
    << "-n calibrated to ~" << kTargetBenchmarkSeconds << " s unless --requests\n"
    << "- ratio = fencecheck ok ops/s / redis-benchmark req/s; controller CPU us/op = "
    << "run.controller_cpu_seconds / (ok + fail + info); op latency = invoke to completion of every "
    << "client op in history.jsonl; setup s = run.setup_seconds\n\n";
  return h.str();
}

int run(const Options& o) {
  if (::access(o.fencecheck.c_str(), X_OK) != 0) {
    std::cerr << "harness_bench: no fencecheck binary at " << o.fencecheck.string()
              << ": build it (cmake --build build --target fencecheck) or pass --fencecheck PATH\n";
    return 3;
  }
  for (const char* tool : {"redis-server", "redis-benchmark"}) {
    if (!os::find_executable(tool)) {
      std::cerr << "harness_bench: " << tool << " not found: " << os::install_hint("redis-server redis-tools")
                << "\n";
      return 3;
    }
  }
  ScopedStopHandler stop_handler(count_stop);
  char tmpl[] = "/tmp/harness_bench.XXXXXX";
  if (!::mkdtemp(tmpl)) {
    std::cerr << "harness_bench: cannot create a temp dir under /tmp: " << os::strerror_string(errno) << "\n";
    return 3;
  }
  const fs::path tmp = tmpl;
  std::vector<Row> rows;
  std::string redis_version = "?", failure;
  int rc = 0;
  try {
    RunState state(RunState::new_run_id());
    state.add_path(tmp);  // `fencecheck clean` removes it should this program be killed
    auto rt = make_runtime("local", state.run_id(), state);
    rt->create({"n1", "c1"});
    rt->set_interrupt_check([] { return g_stops.load() > 0; });
    const std::string v = os::run_command({"redis-server", "--version"}, "", seconds(5)).output;
    if (auto at = v.find("v="); at != std::string::npos) redis_version = v.substr(at + 2, v.find(' ', at) - at - 2);
    if (!o.keep.empty()) fs::create_directories(o.keep);
    try {
      Bench bench(o, tmp, *rt);
      bench.start_redis();
      for (int clients : o.clients) rows.push_back(bench.measure(clients));
    } catch (const Interrupted& e) {
      failure = std::string("interrupted (") + e.what() + ")";
      rc = 130;
    } catch (const std::exception& e) {
      failure = e.what();
      rc = 3;
    }
    rt->destroy();  // stops redis-server and anything still running
  } catch (const std::exception& e) {
    failure = e.what();
    rc = 3;
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (!rows.empty()) {
    std::cout << header(o, redis_version) << markdown(rows);
    if (!failure.empty()) std::cout << "\nIncomplete: " << rows.size() << " of " << o.clients.size() << " rows, then "
                                    << failure << "\n";
    std::cout << std::flush;
  }
  if (rc == 0 && std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.trustworthy(); })) rc = 1;
  if (!o.json_file.empty() && !rows.empty()) {
    nlohmann::json doc = to_json(rows);
    doc["complete"] = rc == 0 || rc == 1;
    doc["header"] = {{"fencecheck", o.fencecheck.string()}, {"seconds", o.seconds},
                     {"redis_version", redis_version}, {"script", kRedisAcquireScript},
                     {"key_space", kKeySpace}, {"lease_ms", kLeaseMs},
                     {"target_benchmark_seconds", kTargetBenchmarkSeconds}};
    std::ofstream out(o.json_file);
    out << doc.dump(2) << "\n";
    if (!out.flush()) {
      std::cerr << "harness_bench: cannot write " << o.json_file.string() << "\n";
      if (rc < 3) rc = 3;
    }
  }
  if (!failure.empty()) std::cerr << "harness_bench: " << failure << "\n";
  if (rc == 1) std::cerr << "harness_bench: some fencecheck run was not valid: its row (marked *) is not trustworthy\n";
  return rc;
}

}  // namespace
}  // namespace fencecheck::bench

int main(int argc, char** argv) {
  using namespace fencecheck::bench;
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "harness_bench: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (o.help) {
    std::cout << kUsage;
    return 0;
  }
  return run(o);
}
