#include "platform/supervisor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "platform/launch.h"
#include "platform/os_util.h"
#include "platform/proc_stat.h"
#include "platform/run_state.h"

namespace fencecheck {

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// PR_SET_PDEATHSIG fires when the *thread* that forked a child exits, so every fork
// happens on this one thread, which lives exactly as long as the Supervisor.
class SpawnThread {
 public:
  SpawnThread() : thread_([this] { loop(); }) {}
  ~SpawnThread() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  template <typename F>
  auto run(F&& fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::forward<F>(fn));
    auto result = task.get_future();
    {
      std::lock_guard lock(mu_);
      jobs_.emplace_back([&task] { task(); });
    }
    cv_.notify_all();
    return result.get();
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return done_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool done_ = false;
  std::thread thread_;
};

// Waits until every thread of every member of the group is stopped (or gone): SIGSTOP is
// asynchronous, and a pause only counts once the process can no longer act.
bool wait_group_stopped(int pgid, const Deadline& deadline) {
  while (!os::group_stopped(pgid)) {
    if (deadline.expired()) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

class ProcessImpl final : public Process {
 public:
  ProcessImpl(ProcessSpec spec, int pid, RunState& state)
      : spec_(std::move(spec)), pid_(pid), state_(state) {}
  ~ProcessImpl() override { stop(milliseconds(0)); }

  const ProcessSpec& spec() const override { return spec_; }
  int pid() const override { return pid_; }

  // Notices an exit without reaping (WNOWAIT): the zombie keeps the pid, hence the group
  // id, reserved until stop() has killed the rest of the group.
  bool alive() override {
    std::lock_guard lock(mu_);
    return alive_locked();
  }

  std::optional<int> exit_status() override {
    std::lock_guard lock(mu_);
    alive_locked();
    return status_;
  }

  std::string describe_exit() override {
    auto status = exit_status();
    return status ? describe_status(*status) : "is running";
  }

  // A signal is a system call here: it never waits, whatever the deadline.
  void signal(int sig, const Deadline&) override { send(sig); }

  bool pause(const Deadline& deadline) override {
    paused_ = true;  // first: a monitor that sees the stop must find it deliberate
    send(SIGSTOP);
    return wait_group_stopped(pid_, deadline);
  }

  void resume(const Deadline&) override {
    send(SIGCONT);
    paused_ = false;
  }

  bool paused() const override { return paused_; }
  void expect_exit() override { exit_expected_ = true; }
  bool exit_expected() const override { return exit_expected_; }

  void crash(const Deadline& deadline) override {
    expect_exit();
    send(SIGKILL);
    while (alive() && !deadline.expired()) std::this_thread::sleep_for(milliseconds(2));
    stop(milliseconds(0));
  }

  void stop(milliseconds grace) override {
    std::lock_guard stopping(stop_mu_);
    exit_expected_ = true;
    paused_ = false;
    {
      std::lock_guard lock(mu_);
      if (reaped_) return;
      ::kill(-pid_, SIGCONT);  // a paused process cannot handle SIGTERM
      ::kill(-pid_, SIGTERM);
    }
    auto deadline = Clock::now() + grace;
    while (alive() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(10));
    std::lock_guard lock(mu_);
    ::kill(-pid_, SIGKILL);  // the leader, and any child it left in the group
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    if (!status_) status_ = status;
    reaped_ = true;
    os::wait_until_group_gone(pid_, 2000);
    try {
      state_.remove_process_group(pid_);
    } catch (...) {
      // The group is dead; a stale record only costs `fencecheck clean` a lookup.
    }
  }

  std::string log_tail(std::size_t lines) const override { return os::file_tail(spec_.log, lines); }

 private:
  void send(int sig) {
    std::lock_guard lock(mu_);
    if (!reaped_) ::kill(-pid_, sig);  // after reaping, the id may belong to someone else
  }

  bool alive_locked() {
    if (status_) return false;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != pid_) {
      return true;
    }
    status_ = info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8
                                         : (info.si_status | (info.si_code == CLD_DUMPED ? 0x80 : 0));
    return false;
  }

  const ProcessSpec spec_;
  const int pid_;
  RunState& state_;
  std::mutex mu_;       // status_, reaped_
  std::mutex stop_mu_;  // one stop at a time, without blocking signal() during the grace
  std::optional<int> status_;
  bool reaped_ = false;
  std::atomic<bool> paused_{false};
  std::atomic<bool> exit_expected_{false};
};

}  // namespace

struct Supervisor::Impl {
  explicit Impl(RunState& s) : state(s) {}
  RunState& state;
  mutable std::mutex mu;
  std::vector<std::unique_ptr<ProcessImpl>> processes;
  SpawnThread spawner;  // declared last: destroyed first, after every child is stopped
};

Supervisor::Supervisor(RunState& state) : impl_(std::make_unique<Impl>(state)) {}

Supervisor::~Supervisor() { stop_all(milliseconds(2000)); }

Process& Supervisor::spawn(const ProcessSpec& spec, const NodeEntry& entry) {
  int pid = impl_->spawner.run([&] { return launch_child(spec, entry, impl_->state); });
  std::lock_guard lock(impl_->mu);
  impl_->processes.push_back(std::make_unique<ProcessImpl>(spec, pid, impl_->state));
  return *impl_->processes.back();
}

Readiness Supervisor::await_ready(Process& p, const std::function<bool()>& ready, const Deadline& deadline) {
  const auto& spec = p.spec();
  for (;;) {
    if (!p.alive()) {
      throw HarnessError(spec.name + " on node " + spec.node + " " + p.describe_exit() +
                         " before it was ready; last lines of " + spec.log.string() + ":\n" +
                         p.log_tail());
    }
    if (ready()) return Readiness::kReady;
    if (deadline.cancelled()) return Readiness::kGaveUp;
    if (deadline.passed()) return Readiness::kTimedOut;
    std::this_thread::sleep_for(milliseconds(50));
  }
}

std::vector<Process*> Supervisor::processes() const {
  std::lock_guard lock(impl_->mu);
  std::vector<Process*> all;
  for (const auto& p : impl_->processes) all.push_back(p.get());
  return all;
}

void Supervisor::stop_all(milliseconds grace) {
  std::vector<Process*> running = processes();
  for (auto it = running.rbegin(); it != running.rend(); ++it) (*it)->stop(grace);
}

}  // namespace fencecheck
