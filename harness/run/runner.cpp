#include "harness/run/runner.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "adapters/registry.h"
#include "backends/external_server.h"
#include "backends/registry.h"
#include "checkers/registry.h"
#include "harness/results.h"
#include "harness/run/bench_health.h"
#include "harness/run/capability_check.h"
#include "harness/run/client_fleet.h"
#include "harness/run/fault_capabilities.h"
#include "harness/run/history_recorder.h"
#include "harness/run/interrupts.h"
#include "harness/run/progress.h"
#include "harness/run/replay.h"
#include "harness/run/run_store.h"
#include "harness/run/topology.h"
#include "harness/run/verdict.h"
#include "harness/run/worker_pool.h"
#include "nemesis/clock/node_clocks.h"
#include "nemesis/schedule.h"
#include "nemesis/targets.h"
#include "platform/atomic_file.h"
#include "platform/external_runtime.h"
#include "platform/json_text.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "workloads/workload.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr milliseconds kTeardown{60000};
constexpr milliseconds kInterruptedTeardown{2000};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// CPU time of this whole process (every thread), in seconds.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

class Runner {
 public:
  Runner(RunConfig c, std::ostream& out, std::ostream& err) : c_(std::move(c)), out_(out), err_(err) {}

  int run();

 private:
  void set_up();
  void start_nodes();
  void run_clients();
  void teardown() noexcept;
  int judge();
  // The nemesis gets the run's one options map; each fault reads its own options from it.
  const FaultOptions& fault_options() const { return c_.opts; }
  void check_interrupt() const {
    if (interrupts() > 0) throw Interrupted("Ctrl-C during setup");
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
  LockEventBus events_;  // before the schedule, whose families subscribe to it
  std::unique_ptr<RuntimeNet> net_;
  std::unique_ptr<ServerProcesses> server_processes_;
  std::unique_ptr<NodeClocks> node_clocks_;  // the offset files; null without the library
  std::unique_ptr<Clocks> clocks_;           // what the nemesis shifts servers' clocks through
  std::unique_ptr<HistoryFaultLog> fault_log_;
  std::unique_ptr<NemesisContext> nemesis_ctx_;
  std::unique_ptr<NemesisSchedule> schedule_;
  RunRecord record_;
  FaultSource faults_;  // --replay's lines or --plan's steps: checked before setup
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
  workload_ = workload_info_->make(
      {static_cast<int>(c_.opts.integer("keys")), c_.opts.ms("hold-ms"), kAppendsPerKey, c_.opts.ms("hold-min-ms")});
  clients_ = client_nodes(static_cast<int>(c_.opts.integer("concurrency")));
  record_.seed = *c_.seed;
  try {
    // The server's nodes may depend on its options (redlock's n=3 or 5); making the
    // server object starts nothing.
    server_ = backend_->make_server(c_.backend_options);
    if (!find_runtime(c_.runtime)->offers.has(Capability::kRunsServers)) {
      server_ = std::make_unique<ExternalServer>(std::move(server_), parse_endpoints(c_.opts.text("endpoints")).servers);
    }
    faults_ = load_fault_source(c_, server_->nodes(), clients_, fault_options());
  } catch (const std::exception& e) {
    err_ << "fencecheck run: " << FaultSource::option_of(c_) << e.what() << "\n";
    return kExitHarnessOrInput;
  }
  InterruptGuard guard;
  auto t_start = std::chrono::steady_clock::now();
  try {
    set_up();
    record_.setup_seconds = seconds_since(t_start);
    run_clients();
    history_->close();  // every line written and the file closed before the checkers read it; throws naming the file if any is missing
  } catch (const Interrupted&) {  // a setup wait gave up, or check_interrupt()
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
  if (!c_.plan.empty()) {  // the run keeps its own copy: repro.sh reruns that one
    fs::copy_file(c_.plan, dir_ / "plan.json");
    c_.plan = (dir_ / "plan.json").string();
  }
  nlohmann::json config = c_.to_json();
  config["command"] = c_.repro_args();
  const bool aims_at_clients = c_.opts.text("nemesis-targets") == kClientTargets;
  const auto unavailable = faults_unavailable_under(*find_runtime(c_.runtime), aims_at_clients);
  config["unavailable_faults"] = unavailable;
  write_file_atomically(dir_ / "config.json", dump_json(config, 2) + "\n");
  write_repro(dir_, exe_, c_.repro_args(), c_.store);
  // A run killed at any moment from here on can be found: latest points at it, and the
  // line naming it and its seed is out before setup (stdout may be a pipe, block-buffered).
  update_latest(c_.store, dir_);
  out_ << "fencecheck run: " << c_.name << " (seed " << *c_.seed << ", runtime " << c_.runtime
       << ") in " << dir_.string() << std::endl;
  if (!find_runtime(c_.runtime)->offers.has(Capability::kRunsServers)) {
    std::string names;
    for (const auto& [fault, _] : unavailable) names += (names.empty() ? "" : ", ") + fault;
    out_ << "fencecheck run: unavailable under --runtime " << c_.runtime << ": " << names << std::endl;
  }
  t0_ = HistoryRecorder::monotonic_ns();
  history_ = std::make_unique<HistoryRecorder>(dir_ / "history.jsonl", t0_);
  start_nodes();
  check_interrupt();
  resource_address_ = start_resource_node(
      *runtime_, {exe_, c_.resource, dir_ / "resource.jsonl", dir_ / "nodes", t0_});
  check_interrupt();
  workers_ = std::make_unique<WorkerPool>(
      *runtime_,
      WorkerSetup{exe_, control_dir_, dir_ / "nodes", c_.backend, server_->client_config(), resource_address_,
                  WorkerHandle::ClientChoice{c_.opts.text("client"), "", c_.opts.ms("op-timeout-ms"),
                                             c_.opts.ms("acquire-timeout-ms"), c_.opts.ms("ttl-ms"),
                                             c_.client_options},
                  [] { return interrupts() > 0; }},
      clients_);
  workers_->start_all();
  check_interrupt();
}

void Runner::start_nodes() {
  runtime_ = make_runtime(c_.runtime, state_->run_id(), *state_, c_.opts);
  runtime_->set_interrupt_check([] { return interrupts() > 0; });  // Ctrl-C ends every setup wait
  // What every node's processes read or write by path: the run's directory (configs, data,
  // logs, the resource's record), the control directory (worker sockets, clock files), and
  // the binary the workers and the resource run, with the clock library beside it.
  runtime_->share(dir_, true);
  runtime_->share(control_dir_, true);
  runtime_->share(exe_, false);
  if (find_adapter(c_.opts.text("client")) != nullptr) runtime_->share(adapters_dir(), false);  // lib/ too
  if (find_runtime(c_.runtime)->offers.has(Capability::kShiftsClocks)) {
    if (auto library = NodeClocks::find_library(exe_)) runtime_->share(*library, false);
  }
  std::vector<std::string> nodes = server_->nodes();
  nodes.push_back(ResourceNode::kNode);
  nodes.insert(nodes.end(), clients_.begin(), clients_.end());
  runtime_->create(nodes);
  // Every process of a server or client node reads its wall clock through the offset
  // library, so that clock faults can shift it; the resource node keeps the host's.
  // A runtime the library cannot reach gets none: clock faults are refused there before
  // the run.
  const bool shifts = find_runtime(c_.runtime)->offers.has(Capability::kShiftsClocks);
  const auto library = shifts ? NodeClocks::find_library(exe_) : std::nullopt;
  if (library) {
    std::vector<std::string> shifted = server_->nodes();
    shifted.insert(shifted.end(), clients_.begin(), clients_.end());
    node_clocks_ = std::make_unique<NodeClocks>(*library, control_dir_ / "clock", shifted);
    runtime_->set_spec_decorator([c = node_clocks_.get()](ProcessSpec& spec) { c->decorate(spec); });
    // Under ssh the nodes hold copies of the offset files: each shift is written into them.
    node_clocks_->set_publisher([rt = runtime_.get()](const fs::path& file, std::size_t bytes, const Deadline& d) {
      rt->file_changed(file, bytes, d);
    });
  }
  server_->setup(*runtime_, dir_ / "nodes");
}

void Runner::run_clients() {
  std::atomic<bool> running{true};
  const auto concurrency = static_cast<int>(c_.opts.integer("concurrency"));
  std::atomic<std::int64_t> next_process{concurrency};
  std::atomic<std::uint64_t> next_element{0};
  health_ = std::make_unique<BenchHealth>(*runtime_, *history_, HealthOptions{c_.opts.ms("stall-ms")});
  net_ = std::make_unique<RuntimeNet>(*runtime_);
  server_processes_ = std::make_unique<ServerProcesses>(*server_, *runtime_);
  fault_log_ = std::make_unique<HistoryFaultLog>(*history_, t0_);
  if (node_clocks_) {
    clocks_ = std::make_unique<ServerClocks>(*node_clocks_, *server_, *runtime_);
  } else {
    clocks_ = std::make_unique<FixedClocks>();
  }
  nemesis_ctx_ = std::make_unique<NemesisContext>(NemesisContext{*net_, *server_processes_, *workers_, *clocks_,
                                                                 *fault_log_, time_, events_, [] { return false; },
                                                                 [] { return interrupts() > 0; }});
  const std::chrono::nanoseconds replay_until = faults_.must_last();
  schedule_ = faults_.make_schedule(c_, *nemesis_ctx_, fault_options());
  SessionShared shared{*history_, *workers_,       *health_,           running,
                       next_process, next_element,     events_,            time_,
                       c_.opts.ms("ttl-ms"), c_.opts.ms("op-timeout-ms"),
                       static_cast<std::uint64_t>(c_.opts.integer("max-info"))};
  ClientFleet fleet(shared, clients_, *c_.seed);
  const double time_limit_s = c_.opts.number("time-limit");
  Progress progress(out_, time_limit_s, *history_, [this] { return schedule_->describe_active(); });
  auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  auto limit = start + std::max(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(time_limit_s)),
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(replay_until));
  schedule_->start();
  fleet.start(*workload_);
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
      // A fault merely armed (a pause-holder waiting for an acquire that never comes,
      // because the servers are gone) has done nothing that could explain a stall.
      std::vector<std::string> problems = health_->poll(schedule_->acting());
      for (const auto& p : problems) err_ << "\nfencecheck run: the bench failed: " << p << "\n";
      if (!problems.empty() || !fleet.any_running()) break;
      progress.update();
      std::this_thread::sleep_for(milliseconds(50));
    }
  } catch (...) {
    loop_failure = std::current_exception();
  }
  // No new op from here; the heal lets paused clients resume and finish the ops they have in
  // flight, while the others already do: the join is quick.
  running = false;
  schedule_->heal_now();
  std::exception_ptr client_failure;
  try {
    fleet.join();
  } catch (...) {
    client_failure = std::current_exception();
  }
  schedule_->stop();
  if (loop_failure) std::rethrow_exception(loop_failure);
  record_.test_seconds = seconds_since(start);
  record_.controller_cpu_seconds = process_cpu_seconds() - cpu_start;
  health_->finish(history_->now());
  if (client_failure) std::rethrow_exception(client_failure);
  if (!schedule_->error().empty()) {
    // Once the user pressed Ctrl-C only the final heal can fail (a host that stopped
    // answering): the run is interrupted already, and the teardown removes every cut.
    if (!record_.interrupted) throw HarnessError("the nemesis failed: " + schedule_->error());
    err_ << "fencecheck run: warning: " << schedule_->error() << "\n";
  }
  fleet.final_reads(workload_->final_read_keys(), [] { return interrupts() >= 2; });
  // The main loop's polls ended with the test phase; a process that died during the final
  // reads (the resource, failing to write its log) is a problem all the same.
  for (const auto& p : health_->poll(true)) err_ << "\nfencecheck run: the bench failed: " << p << "\n";
  record_.health = health_->to_json();
  FaultSource::note_progress(*schedule_, record_.health);
  progress.finish();
}

// Bounded on every runtime: 60 s normally, 2 s once the user pressed Ctrl-C (a silent ssh
// host is then left to `fencecheck clean --nodes-file`, and a warning says so).
void Runner::teardown() noexcept {
  const Deadline deadline = Deadline::after(interrupts() > 0 ? kInterruptedTeardown : kTeardown);
  try {
    if (schedule_) schedule_->stop();
    if (workers_) workers_->shutdown_all(std::min(milliseconds(1000), deadline.left() / 4));
    if (server_) server_->teardown(deadline);
  } catch (const std::exception& e) {
    err_ << "fencecheck run: warning: during teardown: " << e.what() << "\n";
  }
  schedule_.reset();
  nemesis_ctx_.reset();
  clocks_.reset();  // refers to server_
  health_.reset();
  workers_.reset();
  server_.reset();
  if (runtime_) runtime_->destroy(deadline);  // every process stopped, every namespace removed
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

int Runner::judge() {
  FinishedRun run{dir_, c_.store, c_.name, c_.junit, checkers_for(workload_info_->ops), check_options(c_.opts)};
  return judge_and_publish(run, record_, out_, err_);
}

}  // namespace

int run_test(RunConfig config, std::ostream& out, std::ostream& err) {
  return Runner(std::move(config), out, err).run();
}

}  // namespace fencecheck
