#include "harness/run/runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "backends/registry.h"
#include "checkers/registry.h"
#include "harness/results.h"
#include "harness/run/bench_health.h"
#include "harness/run/client_session.h"
#include "harness/run/fault_capabilities.h"
#include "harness/run/history_recorder.h"
#include "harness/run/progress.h"
#include "harness/run/replay.h"
#include "harness/run/run_store.h"
#include "harness/run/worker_pool.h"
#include "nemesis/clock/node_clocks.h"
#include "nemesis/replay_check.h"
#include "nemesis/schedule.h"
#include "platform/atomic_file.h"
#include "platform/run_state.h"
#include "platform/stop_signals.h"
#include "platform/json_text.h"
#include "report/junit.h"
#include "report/run_index.h"
#include "report/run_report.h"
#include "workloads/workload.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

volatile std::sig_atomic_t g_interrupts = 0;
extern "C" void on_interrupt(int) { g_interrupts = g_interrupts + 1; }

// SIGINT/SIGTERM handlers for the life of a run: they only count, the runner polls.
class InterruptGuard {
 public:
  InterruptGuard() { g_interrupts = 0; }

 private:
  ScopedStopHandler handler_{on_interrupt};
};

int interrupts() { return g_interrupts; }

struct InterruptedDuringSetup {};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

class Runner {
 public:
  Runner(RunConfig c, std::ostream& out, std::ostream& err) : c_(std::move(c)), out_(out), err_(err) {}

  int run();

 private:
  void set_up();
  void start_nodes();
  void start_resource();
  void run_clients();
  void final_reads(std::vector<std::unique_ptr<WorkerSession>>& sessions);
  void teardown() noexcept;
  int judge();
  int publish(CheckReport report, const CheckRequest& req);
  void write_reports();
  FaultOptions fault_options() const {
    return {milliseconds(c_.pause_ms), milliseconds(c_.restart_ms), milliseconds(c_.clock_max_ms),
            milliseconds(c_.clock_min_ms), c_.nemesis_targets};
  }
  void check_interrupt() const {
    if (interrupts() > 0) throw InterruptedDuringSetup{};
  }

  RunConfig c_;
  std::ostream& out_;
  std::ostream& err_;
  const BackendInfo* backend_ = nullptr;
  const WorkloadInfo* workload_info_ = nullptr;
  std::unique_ptr<Workload> workload_;
  fs::path dir_, exe_, control_dir_;
  std::vector<std::string> clients_;
  std::int64_t t0_ = 0;
  // Declaration order is teardown order in reverse: the schedule goes first, the run
  // state last (teardown() also resets them explicitly, in this order).
  std::unique_ptr<RunState> state_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<HistoryRecorder> history_;
  std::unique_ptr<LockServer> server_;
  std::unique_ptr<WorkerPool> workers_;
  std::unique_ptr<BenchHealth> health_;
  std::string resource_address_;
  SteadyTime time_;
  std::unique_ptr<RuntimeNet> net_;
  std::unique_ptr<ServerProcesses> server_processes_;
  std::unique_ptr<NodeClocks> node_clocks_;  // the offset files; null without the library
  std::unique_ptr<Clocks> clocks_;           // what the nemesis shifts servers' clocks through
  std::unique_ptr<HistoryFaultLog> fault_log_;
  std::unique_ptr<NemesisContext> nemesis_ctx_;
  std::unique_ptr<NemesisSchedule> schedule_;
  RunRecord record_;
  std::vector<ReplayLine> replay_lines_;  // --replay: checked before setup
};

int Runner::run() {
  if (!c_.replay.empty()) {
    try {
      c_ = replayed_config(c_);
    } catch (const std::exception& e) {
      err_ << "fencecheck run: --replay: " << e.what() << "\n";
      return kExitHarnessOrInput;
    }
  }
  c_.resolve();
  if (auto problem = c_.problem()) {
    err_ << "fencecheck run: " << *problem << "\n";
    return kExitHarnessOrInput;
  }
  backend_ = find_backend(c_.backend);
  workload_info_ = find_workload(c_.workload);
  workload_ = workload_info_->make({c_.keys, milliseconds(c_.hold_ms)});
  for (int i = 1; i <= c_.concurrency; ++i) clients_.push_back("c" + std::to_string(i));
  record_.seed = *c_.seed;
  try {
    // The server's nodes may depend on its options (redlock's n=3 or 5); making the
    // server object starts nothing.
    server_ = backend_->make_server(c_.backend_options);
    if (!c_.replay.empty()) {
      replay_lines_ = read_replay_lines(c_.replay);
      check_replay(c_.nemesis, replay_lines_, server_->nodes(), clients_, fault_options(),
                   replay_history_path(c_.replay));
    }
  } catch (const std::exception& e) {
    err_ << "fencecheck run: --replay: " << e.what() << "\n";
    return kExitHarnessOrInput;
  }
  InterruptGuard guard;
  auto t_start = std::chrono::steady_clock::now();
  try {
    set_up();
    record_.setup_seconds = seconds_since(t_start);
    run_clients();
  } catch (const Interrupted&) {
    out_ << "fencecheck run: interrupted during setup; nothing was tested\n";
    teardown();
    return 2;
  } catch (const InterruptedDuringSetup&) {
    out_ << "fencecheck run: interrupted during setup; nothing was tested\n";
    teardown();
    return 2;
  } catch (const std::exception& e) {
    err_ << "fencecheck run: " << e.what() << "\n";
    teardown();
    if (!dir_.empty()) err_ << "fencecheck run: what was recorded is in " << dir_.string() << "\n";
    return kExitHarnessOrInput;
  }
  auto t_down = std::chrono::steady_clock::now();
  teardown();
  record_.teardown_seconds = seconds_since(t_down);
  return judge();
}

void Runner::set_up() {
  exe_ = fs::read_symlink("/proc/self/exe");
  state_ = std::make_unique<RunState>(RunState::new_run_id());
  control_dir_ = fs::temp_directory_path() / ("fc-" + state_->run_id());
  state_->add_path(control_dir_);
  // 0711: others may pass through but not list it, so that a server running as another
  // user (postgres) can open its node's clock file inside; the worker sockets in it are
  // 0600 and stay the controller's alone.
  if (::mkdir(control_dir_.c_str(), 0711) != 0 || ::chmod(control_dir_.c_str(), 0711) != 0) {
    throw HarnessError("cannot create control directory " + control_dir_.string());
  }
  dir_ = create_run_dir(c_.store, c_.name);
  nlohmann::json config = c_.to_json();
  config["command"] = c_.repro_args();
  write_file_atomically(dir_ / "config.json", dump_json(config, 2) + "\n");
  write_repro(dir_, exe_, c_.repro_args(), c_.store);
  // A run killed at any moment from here on can be found: latest points at it, and the
  // line naming it and its seed is out before setup (stdout may be a pipe, block-buffered).
  update_latest(c_.store, dir_);
  out_ << "fencecheck run: " << c_.name << " (seed " << *c_.seed << ", runtime " << c_.runtime
       << ") in " << dir_.string() << std::endl;
  t0_ = HistoryRecorder::monotonic_ns();
  history_ = std::make_unique<HistoryRecorder>(dir_ / "history.jsonl", t0_);
  start_nodes();
  check_interrupt();
  start_resource();
  check_interrupt();
  workers_ = std::make_unique<WorkerPool>(
      *runtime_,
      WorkerSetup{exe_, control_dir_, dir_ / "nodes", c_.backend, server_->client_config(), resource_address_},
      clients_);
  workers_->start_all();
  check_interrupt();
}

void Runner::start_nodes() {
  runtime_ = make_runtime(c_.runtime, state_->run_id(), *state_);
  runtime_->set_interrupt_check([] { return interrupts() > 0; });  // Ctrl-C ends every setup wait
  std::vector<std::string> nodes = server_->nodes();
  nodes.push_back("r1");
  nodes.insert(nodes.end(), clients_.begin(), clients_.end());
  runtime_->create(nodes);
  // Every process of a server or client node reads its wall clock through the offset
  // library, so that clock faults can shift it; the resource node keeps the host's.
  if (auto library = NodeClocks::find_library(exe_)) {
    std::vector<std::string> shifted = server_->nodes();
    shifted.insert(shifted.end(), clients_.begin(), clients_.end());
    node_clocks_ = std::make_unique<NodeClocks>(*library, control_dir_ / "clock", shifted);
    runtime_->set_spec_decorator([c = node_clocks_.get()](ProcessSpec& spec) { c->decorate(spec); });
  }
  server_->setup(*runtime_, dir_ / "nodes");
}

void Runner::start_resource() {
  const Node& r1 = runtime_->node("r1");
  std::uint16_t port = runtime_->port("r1", "resource", 7000);
  resource_address_ = r1.address + ":" + std::to_string(port);
  Process& p = runtime_->spawn(
      {"r1", "resource",
       {exe_.string(), "resource", "--listen", resource_address_, "--mode", c_.resource, "--log",
        (dir_ / "resource.jsonl").string(), "--t0-ns", std::to_string(t0_)},
       {}, dir_ / "nodes" / "r1" / "resource.log", {}, {}});
  runtime_->wait_ready(
      p, [&] { return runtime_->tcp_connects("r1", r1.address, port, milliseconds(200)); },
      milliseconds(10000));
}

void Runner::run_clients() {
  std::atomic<bool> running{true};
  std::atomic<std::int64_t> next_process{c_.concurrency};
  std::atomic<std::uint64_t> next_element{0};
  health_ = std::make_unique<BenchHealth>(*runtime_, *history_, HealthOptions{milliseconds(c_.stall_ms)});
  net_ = std::make_unique<RuntimeNet>(*runtime_);
  server_processes_ = std::make_unique<ServerProcesses>(*server_);
  fault_log_ = std::make_unique<HistoryFaultLog>(*history_, t0_);
  if (node_clocks_) {
    clocks_ = std::make_unique<ServerClocks>(*node_clocks_, *server_);
  } else {
    clocks_ = std::make_unique<FixedClocks>();
  }
  nemesis_ctx_ = std::make_unique<NemesisContext>(
      NemesisContext{*net_, *server_processes_, *workers_, *clocks_, *fault_log_, time_});
  // A replay's test phase lasts at least until its last recorded line (the stored run's
  // final heal) is applied, so that no fault is lost to a few milliseconds of jitter.
  std::chrono::nanoseconds replay_until{0};
  if (c_.replay.empty()) {
    schedule_ = std::make_unique<NemesisSchedule>(c_.nemesis, milliseconds(c_.nemesis_interval_ms),
                                                  *c_.seed, *nemesis_ctx_, fault_options());
  } else {
    if (!replay_lines_.empty()) replay_until = replay_lines_.back().after + milliseconds(100);
    schedule_ = std::make_unique<NemesisSchedule>(c_.nemesis, std::move(replay_lines_), *nemesis_ctx_,
                                                  fault_options());
  }
  SessionShared shared{*history_, *workers_, *health_, running, next_process, next_element,
                       [this](const std::string& node) { schedule_->on_acquired(node); },
                       milliseconds(c_.ttl_ms), milliseconds(c_.op_timeout_ms), c_.max_info};
  std::vector<std::unique_ptr<WorkerSession>> sessions;
  for (int i = 0; i < c_.concurrency; ++i) {
    sessions.push_back(std::make_unique<WorkerSession>(shared, clients_[static_cast<std::size_t>(i)], i,
                                                       *c_.seed + 1 + static_cast<std::uint64_t>(i)));
  }
  Progress progress(out_, c_.time_limit_s, *history_, [this] { return schedule_->describe_active(); });
  auto start = std::chrono::steady_clock::now();
  auto limit = start + std::max(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(c_.time_limit_s)),
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(replay_until));
  schedule_->start();
  // A client thread that fails (the history cannot be written) ends the test for all;
  // the first error is rethrown here once every thread has stopped.
  std::mutex failure_mu;
  std::exception_ptr failure;
  std::vector<std::thread> threads;
  for (auto& s : sessions) {
    threads.emplace_back([&, session = s.get()] {
      try {
        workload_->run_client(*session);
      } catch (...) {
        std::lock_guard lock(failure_mu);
        if (!failure) failure = std::current_exception();
        running = false;
      }
    });
  }
  auto any_client_running = [&] {
    for (const auto& s : sessions) {
      if (s->running()) return true;
    }
    return false;
  };
  // Nothing below may leave the client threads running: an exception of this loop is kept
  // and rethrown once they are joined.
  std::exception_ptr loop_failure;
  try {
    while (std::chrono::steady_clock::now() < limit && running) {
      if (interrupts() > 0) {
        record_.interrupted = true;
        out_ << "\nfencecheck run: interrupted; healing and ending the test early (Ctrl-C again "
                "skips the checkers)"
             << std::endl;
        break;
      }
      std::vector<std::string> problems = health_->poll(!schedule_->describe_active().empty());
      for (const auto& p : problems) err_ << "\nfencecheck run: the bench failed: " << p << "\n";
      if (!problems.empty() || !any_client_running()) break;
      progress.update();
      std::this_thread::sleep_for(milliseconds(50));
    }
  } catch (...) {
    loop_failure = std::current_exception();
  }
  schedule_->heal_now();  // paused clients resume and finish their ops: the join is quick
  running = false;
  for (auto& t : threads) t.join();
  schedule_->stop();
  if (loop_failure) std::rethrow_exception(loop_failure);
  record_.test_seconds = seconds_since(start);
  health_->finish(history_->now());
  if (failure) std::rethrow_exception(failure);
  if (!schedule_->error().empty()) throw HarnessError("the nemesis failed: " + schedule_->error());
  if (interrupts() < 2) final_reads(sessions);
  // The main loop's polls ended with the test phase; a process that died during the final
  // reads (the resource, failing to write its log) is a problem all the same.
  for (const auto& p : health_->poll(true)) err_ << "\nfencecheck run: the bench failed: " << p << "\n";
  record_.health = health_->to_json();
  progress.finish();
}

// The first client whose worker still answers reads each key. Sessions ignore the end of
// the test phase for an op already asked for, so the clients' own sessions do it.
void Runner::final_reads(std::vector<std::unique_ptr<WorkerSession>>& sessions) {
  for (const auto& key : workload_->final_read_keys()) {
    for (auto& s : sessions) {
      if (interrupts() >= 2) return;
      Process* worker = workers_->process(s->node());
      if (s->stopped() || worker == nullptr || !worker->alive()) continue;
      if (s->invoke(OpFn::kRead, key, nullptr).type == OpType::kOk) break;
    }
  }
}

void Runner::teardown() noexcept {
  try {
    if (schedule_) schedule_->stop();
    if (workers_) workers_->shutdown_all(milliseconds(1000));
    if (server_) server_->teardown();
  } catch (const std::exception& e) {
    err_ << "fencecheck run: warning: during teardown: " << e.what() << "\n";
  }
  schedule_.reset();
  nemesis_ctx_.reset();
  clocks_.reset();  // refers to server_
  health_.reset();
  workers_.reset();
  server_.reset();
  if (runtime_) runtime_->destroy();  // every process stopped, every namespace removed
  runtime_.reset();
  node_clocks_.reset();
  if (!control_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(control_dir_, ec);
    try {
      if (state_) state_->remove_path(control_dir_);
    } catch (const std::exception& e) {
      err_ << "fencecheck run: warning: " << e.what() << "\n";
    }
  }
  history_.reset();  // closes history.jsonl
  state_.reset();    // the run cleaned up after itself: its state file goes
}

// Writes results.json and prints the summary; returns the exit code.
int Runner::publish(CheckReport report, const CheckRequest& req) {
  Results results = make_results(std::move(report), RunOrigin::kFinishedRun, record_);
  write_file_atomically(dir_ / "results.json", dump_json(results.to_json(req), 2) + "\n");
  update_latest(c_.store, dir_);
  out_ << results.summary() << "verdict: " << to_string(results.verdict()) << " ("
       << dir_.string() << "; rerun with " << (dir_ / "repro.sh").string() << ")\n"
       << std::flush;
  write_reports();
  return results.exit_code();
}

// report.html, the store's index and --junit. Failing to draw them is reported but changes
// no verdict: everything the run recorded is already on disk, and `fencecheck report` can
// draw it again.
void Runner::write_reports() {
  try {
    ReportWritten r = write_run_report(dir_);
    out_ << "report: " << r.file.string() << "\n";
  } catch (const std::exception& e) {
    err_ << "fencecheck run: warning: no report.html: " << e.what() << "\n";
  }
  try {
    write_run_index(c_.store);
  } catch (const std::exception& e) {
    err_ << "fencecheck run: warning: the run index was not updated: " << e.what() << "\n";
  }
  if (c_.junit.empty()) return;
  try {
    write_junit(c_.junit, {JunitSuite{c_.name, {junit_run(dir_)}}});
  } catch (const std::exception& e) {
    err_ << "fencecheck run: warning: --junit " << c_.junit << ": " << e.what() << "\n";
  }
}

int Runner::judge() {
  CheckRequest req;
  req.history = (dir_ / "history.jsonl").string();
  if (fs::exists(dir_ / "resource.jsonl")) req.resource = (dir_ / "resource.jsonl").string();
  req.checkers = checkers_for(workload_info_->ops);
  try {
    if (interrupts() < 2) {
      // The checkers run beside this thread, which keeps listening for a second Ctrl-C.
      auto checks = std::async(std::launch::async, [req] { return run_checks(req); });
      while (checks.wait_for(milliseconds(50)) != std::future_status::ready) {
        if (interrupts() >= 2) break;
      }
      if (interrupts() < 2 || checks.wait_for(milliseconds(0)) == std::future_status::ready) {
        return publish(checks.get(), req);
      }
      record_.checks_skipped = true;
      out_ << "fencecheck run: interrupted again: the checkers are stopped; the history is kept\n";
      int code = publish(CheckReport{}, req);
      // The checker thread cannot be stopped from outside; everything of the run is torn
      // down and written, so leave without waiting for it — after what was printed.
      out_.flush();
      err_.flush();
      std::fflush(nullptr);
      std::_Exit(code);
    }
    record_.checks_skipped = true;
    out_ << "fencecheck run: interrupted again: the checkers are skipped; the history is kept\n";
    return publish(CheckReport{}, req);
  } catch (const std::exception& e) {
    err_ << "fencecheck run: checking " << req.history << ": " << e.what() << "\n";
    return kExitHarnessOrInput;
  }
}

}  // namespace

int run_test(RunConfig config, std::ostream& out, std::ostream& err) {
  return Runner(std::move(config), out, err).run();
}

}  // namespace fencecheck
