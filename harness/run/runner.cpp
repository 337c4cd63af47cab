#include "harness/run/runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "backends/registry.h"
#include "checkers/check.h"
#include "harness/control/worker_handle.h"
#include "platform/atomic_file.h"
#include "harness/run/client_session.h"
#include "harness/run/history_recorder.h"
#include "harness/run/progress.h"
#include "harness/run/run_store.h"
#include "platform/run_state.h"
#include "platform/supervisor.h"
#include "nemesis/schedule.h"
#include "workloads/workload.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

volatile std::sig_atomic_t g_interrupts = 0;
extern "C" void on_interrupt(int) { g_interrupts = g_interrupts + 1; }

// Installs SIGINT/SIGTERM handlers for the life of a run: they only count, the runner polls.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupts = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// Waits until every thread of pid is stopped: SIGSTOP is asynchronous, and a pause only
// counts once the process can no longer act.
void wait_stopped(int pid, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    std::error_code ec;
    for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
      std::ifstream stat(task.path() / "stat");
      std::string line;
      std::getline(stat, line);
      auto close = line.rfind(')');
      if (close == std::string::npos || close + 2 >= line.size()) continue;
      char state = line[close + 2];
      if (state != 'T' && state != 't' && state != 'Z' && state != 'X') all = false;
    }
    if (all || ec) return;
    std::this_thread::sleep_for(milliseconds(1));
  }
}

class Runner : public NemesisEnv {
 public:
  Runner(RunConfig c, std::ostream& out, std::ostream& err) : c_(std::move(c)), out_(out), err_(err) {}

  int run();

  // NemesisEnv
  std::vector<std::string> client_nodes() const override { return clients_; }
  std::vector<std::string> server_nodes() const override { return backend_->server_nodes; }
  void signal_node(const std::string& node, int sig) override {
    for (Process* p : processes_on(node)) {
      p->signal(sig);
      if (sig == SIGSTOP) wait_stopped(p->pid(), milliseconds(1000));
    }
  }
  void record(const std::string& f, const nlohmann::json& value) override {
    history_->record_nemesis(f, value);
  }

 private:
  std::vector<Process*> processes_on(const std::string& node) {
    std::vector<Process*> ps;
    if (auto it = workers_.find(node); it != workers_.end()) ps.push_back(it->second.process);
    if (server_) {
      for (Process* p : server_->processes()) {
        if (p->spec().node == node) ps.push_back(p);
      }
    }
    return ps;
  }
  void start_nodes();
  void start_resource();
  void start_workers();
  void run_clients();
  void final_reads(std::vector<std::unique_ptr<WorkerSession>>& sessions);
  void teardown();
  int judge();

  struct Worker {
    Process* process = nullptr;
    std::unique_ptr<WorkerHandle> handle;
  };

  RunConfig c_;
  std::ostream& out_;
  std::ostream& err_;
  const BackendInfo* backend_ = nullptr;
  std::unique_ptr<Workload> workload_;
  fs::path dir_, exe_, control_dir_;
  std::vector<std::string> clients_;
  std::int64_t t0_ = 0;
  std::unique_ptr<RunState> state_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Supervisor> supervisor_;
  std::unique_ptr<LockServer> server_;
  std::string resource_address_;
  std::map<std::string, Worker> workers_;
  std::unique_ptr<HistoryRecorder> history_;
  std::unique_ptr<NemesisSchedule> schedule_;
  double setup_s_ = 0, test_s_ = 0, teardown_s_ = 0;
  bool interrupted_ = false;
};

int Runner::run() {
  c_.resolve();
  if (auto problem = c_.problem()) {
    err_ << "fencecheck run: " << *problem << "\n";
    return 3;
  }
  backend_ = find_backend(c_.backend);
  workload_ = find_workload(c_.workload)->make({c_.keys, milliseconds(c_.hold_ms)});
  for (int i = 1; i <= c_.concurrency; ++i) clients_.push_back("c" + std::to_string(i));
  InterruptGuard interrupts;
  auto t_start = std::chrono::steady_clock::now();
  try {
    exe_ = fs::read_symlink("/proc/self/exe");
    dir_ = create_run_dir(c_.store, c_.name);
    nlohmann::json config = c_.to_json();
    config["command"] = c_.repro_args();
    write_file_atomically(dir_ / "config.json", config.dump(2) + "\n");
    write_repro(dir_, exe_, c_.repro_args());
    out_ << "fencecheck run: " << c_.name << " (seed " << *c_.seed << ", runtime " << c_.runtime
         << ") in " << dir_.string() << "\n";
    t0_ = HistoryRecorder::monotonic_ns();
    history_ = std::make_unique<HistoryRecorder>(dir_ / "history.jsonl", t0_);
    start_nodes();
    start_resource();
    start_workers();
    setup_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    run_clients();
  } catch (const std::exception& e) {
    err_ << "fencecheck run: " << e.what() << "\n";
    teardown();
    if (!dir_.empty()) err_ << "fencecheck run: what was recorded is in " << dir_.string() << "\n";
    return 3;
  }
  auto t_down = std::chrono::steady_clock::now();
  teardown();
  teardown_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_down).count();
  return judge();
}

void Runner::start_nodes() {
  state_ = std::make_unique<RunState>(RunState::new_run_id());
  runtime_ = make_runtime(c_.runtime, state_->run_id(), *state_);
  std::vector<std::string> nodes = backend_->server_nodes;
  nodes.push_back("r1");
  nodes.insert(nodes.end(), clients_.begin(), clients_.end());
  runtime_->create(nodes);
  supervisor_ = std::make_unique<Supervisor>(*runtime_, *state_);
  server_ = backend_->make_server(nlohmann::json::object());
  server_->start(*runtime_, *supervisor_, dir_ / "nodes");
}

void Runner::start_resource() {
  const Node& r1 = runtime_->node("r1");
  std::uint16_t port = runtime_->port("r1", "resource", 7000);
  resource_address_ = r1.address + ":" + std::to_string(port);
  Process& p = supervisor_->spawn(
      {"r1", "resource",
       {exe_.string(), "resource", "--listen", resource_address_, "--mode", c_.resource, "--log",
        (dir_ / "resource.jsonl").string(), "--t0-ns", std::to_string(t0_)},
       {}, dir_ / "nodes" / "r1" / "resource.log", {}});
  supervisor_->wait_ready(
      p, [&] { return supervisor_->tcp_connects("r1", r1.address, port, milliseconds(200)); },
      milliseconds(10000));
}

void Runner::start_workers() {
  control_dir_ = fs::temp_directory_path() / ("fc-" + state_->run_id());
  state_->add_path(control_dir_);
  if (::mkdir(control_dir_.c_str(), 0700) != 0) {
    throw HarnessError("cannot create control directory " + control_dir_.string());
  }
  for (const auto& node : clients_) {
    std::string socket = (control_dir_ / (node + ".sock")).string();
    Worker& w = workers_[node];
    w.process = &supervisor_->spawn({node, "worker", {exe_.string(), "worker", "--socket", socket, "--node", node},
                                     {}, dir_ / "nodes" / node / "worker.log", {}});
    w.handle = std::make_unique<WorkerHandle>(socket);
  }
  for (auto& [node, w] : workers_) {
    try {
      w.handle->wait_connected(milliseconds(10000));
      w.handle->setup(c_.backend, server_->client_config(), resource_address_, node);
    } catch (const std::exception& e) {
      throw HarnessError("worker on " + node + " did not start: " + e.what() + "\n" + w.process->log_tail());
    }
  }
}

void Runner::run_clients() {
  std::atomic<bool> running{true};
  std::atomic<std::int64_t> next_process{c_.concurrency};
  std::atomic<std::uint64_t> next_element{0};
  NemesisOptions nopts{milliseconds(c_.pause_ms)};
  schedule_ = std::make_unique<NemesisSchedule>(c_.nemesis, milliseconds(c_.nemesis_interval_ms),
                                                *c_.seed, *this, nopts);
  SessionShared shared{*history_, running, next_process, next_element,
                       [this](const std::string& node) { schedule_->on_acquired(node); },
                       milliseconds(c_.ttl_ms), milliseconds(c_.op_timeout_ms)};
  std::vector<std::unique_ptr<WorkerSession>> sessions;
  for (int i = 0; i < c_.concurrency; ++i) {
    const std::string& node = clients_[static_cast<std::size_t>(i)];
    sessions.push_back(std::make_unique<WorkerSession>(shared, *workers_[node].handle, node, i,
                                                       *c_.seed + 1 + static_cast<std::uint64_t>(i)));
  }
  Progress progress(out_, c_.time_limit_s, *history_, [this] { return schedule_->describe_active(); });
  auto start = std::chrono::steady_clock::now();
  auto limit = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(c_.time_limit_s));
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
  while (std::chrono::steady_clock::now() < limit && g_interrupts == 0 && running) {
    progress.update();
    std::this_thread::sleep_for(milliseconds(100));
  }
  interrupted_ = g_interrupts != 0;
  if (interrupted_) out_ << "\nfencecheck run: interrupted; ending the test early\n";
  running = false;
  for (auto& t : threads) t.join();
  schedule_->stop();  // every paused process resumes before the final reads
  if (failure) std::rethrow_exception(failure);
  if (!schedule_->error().empty()) throw HarnessError("the nemesis failed: " + schedule_->error());
  test_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  final_reads(sessions);
  progress.finish();
}

void Runner::final_reads(std::vector<std::unique_ptr<WorkerSession>>& sessions) {
  for (const auto& key : workload_->final_read_keys()) {
    for (auto& s : sessions) {  // the first client that answers reads it
      if (s->invoke(OpFn::kRead, key, nullptr).type == OpType::kOk) break;
    }
  }
}

void Runner::teardown() {
  if (schedule_) schedule_->stop();
  for (auto& [node, w] : workers_) {
    if (w.handle) w.handle->shutdown(milliseconds(1000));
  }
  if (supervisor_) supervisor_->stop_all();
  if (server_) server_->stop();
  supervisor_.reset();
  if (runtime_) runtime_->destroy();
  if (!control_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(control_dir_, ec);
    if (state_) state_->remove_path(control_dir_);
  }
  history_.reset();  // closes history.jsonl
  state_.reset();    // the run cleaned up after itself: its state file goes
}

int Runner::judge() {
  CheckRequest req;
  req.history = (dir_ / "history.jsonl").string();
  if (fs::exists(dir_ / "resource.jsonl")) req.resource = (dir_ / "resource.jsonl").string();
  try {
    CheckReport report = run_checks(req);
    nlohmann::json results = report.to_json(req);
    results["run"] = {{"setup_seconds", setup_s_}, {"test_seconds", test_s_},
                      {"teardown_seconds", teardown_s_}, {"seed", *c_.seed}, {"interrupted", interrupted_}};
    // A cut-short test that found nothing proves little: undecided, not valid.
    bool undecided = interrupted_ && report.overall() == Verdict::kValid;
    if (undecided) results["valid"] = "unknown";
    write_file_atomically(dir_ / "results.json", results.dump(2) + "\n");
    update_latest(c_.store, dir_);
    out_ << report.summary() << "verdict: "
         << (undecided ? "unknown (interrupted before the time limit)" : std::string(to_string(report.overall())))
         << " (" << dir_.string() << "; rerun with " << (dir_ / "repro.sh").string() << ")\n";
    return undecided ? 2 : report.exit_code();
  } catch (const std::exception& e) {
    err_ << "fencecheck run: checking " << req.history << ": " << e.what() << "\n";
    return 3;
  }
}

}  // namespace

int run_test(RunConfig config, std::ostream& out, std::ostream& err) {
  return Runner(std::move(config), out, err).run();
}

}  // namespace fencecheck
