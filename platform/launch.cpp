#include "platform/launch.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>

#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime.h"
#include "platform/unique_fd.h"

extern char** environ;

namespace fencecheck {

namespace {

// Steps the child can fail at, reported back over the error pipe.
enum class Step : int { kParentGone = 1, kNetns, kProcessGroup, kCwd, kStdio, kExec };

const char* step_name(Step s) {
  switch (s) {
    case Step::kParentGone: return "the controller exited during start-up";
    case Step::kNetns: return "entering the node's network namespace";
    case Step::kProcessGroup: return "creating its process group";
    case Step::kCwd: return "changing to its working directory";
    case Step::kStdio: return "redirecting its output to the log";
    case Step::kExec: return "exec";
  }
  return "start-up";
}

struct ChildFailure {
  Step step;
  int err;
};

// Everything the child needs, built before fork: after fork only async-signal-safe calls.
struct ExecPlan {
  std::string exe;
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
};

ExecPlan plan_exec(const ProcessSpec& spec, const std::string& exe) {
  ExecPlan plan{exe, spec.argv, {}, {}, {}};
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  if (!spec.preload.empty()) {  // ours first, then whatever the environment preloads
    std::string preload;
    for (const auto& lib : spec.preload) preload += (preload.empty() ? "" : ":") + lib;
    if (auto it = env.find("LD_PRELOAD"); it != env.end() && !it->second.empty()) {
      preload += ":" + it->second;
    }
    env["LD_PRELOAD"] = preload;
  }
  for (const auto& [k, v] : env) plan.env.push_back(k + "=" + v);
  for (auto& a : plan.args) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (auto& e : plan.env) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  return plan;
}

[[noreturn]] void child_fail(int error_fd, Step step) {
  ChildFailure f{step, errno};
  [[maybe_unused]] ssize_t n = ::write(error_fd, &f, sizeof f);
  ::_exit(127);
}

[[noreturn]] void run_child(const ExecPlan& plan, pid_t parent, int go_fd, int error_fd,
                            int netns_fd, int log_fd, const char* cwd) {
  // Ignored signals and the blocked mask survive exec; the child starts clean.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);

  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) child_fail(error_fd, Step::kParentGone);  // died before prctl
  if (::setpgid(0, 0) != 0) child_fail(error_fd, Step::kProcessGroup);
  char go = 0;
  while (::read(go_fd, &go, 1) < 0 && errno == EINTR) {
  }
  if (go != 'g') child_fail(error_fd, Step::kParentGone);
  if (netns_fd >= 0 && ::setns(netns_fd, CLONE_NEWNET) != 0) child_fail(error_fd, Step::kNetns);
  if (cwd && ::chdir(cwd) != 0) child_fail(error_fd, Step::kCwd);
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(log_fd, 1) < 0 || ::dup2(log_fd, 2) < 0) {
    child_fail(error_fd, Step::kStdio);
  }
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // no controller fd leaks into servers
  ::execve(plan.exe.c_str(), plan.argv.data(), plan.envp.data());
  child_fail(error_fd, Step::kExec);
}

}  // namespace

int launch_child(const ProcessSpec& spec, const std::string& netns_path, RunState& state) {
  const std::string what = "cannot start " + spec.name + " on node " + spec.node;
  if (spec.argv.empty() || spec.argv[0].empty()) throw HarnessError(what + ": empty command");
  if (spec.log.empty()) throw HarnessError(what + ": no log file given");
  auto exe = os::find_executable(spec.argv[0]);
  if (!exe) {
    throw HarnessError(what + ": `" + spec.argv[0] + "` is not installed or not in PATH (" +
                       os::install_hint("") + ")");
  }
  std::error_code ec;
  std::filesystem::create_directories(spec.log.parent_path(), ec);
  UniqueFd log(::open(spec.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log.get() < 0) {
    throw HarnessError(what + ": cannot open log " + spec.log.string() + ": " +
                       os::strerror_string(errno));
  }
  UniqueFd netns;
  if (!netns_path.empty()) {
    netns.reset(::open(netns_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (netns.get() < 0) {
      throw HarnessError(what + ": cannot open " + netns_path + ": " + os::strerror_string(errno));
    }
  }
  ExecPlan plan = plan_exec(spec, *exe);
  std::string cwd = spec.cwd.string();
  auto [go_read, go_write] = make_pipe();
  auto [err_read, err_write] = make_pipe();

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw HarnessError(what + ": fork: " + os::strerror_string(errno));
  if (pid == 0) {
    // The child must see EOF on `go` if the controller dies, so it drops the write end.
    ::close(go_write.get());
    ::close(err_read.get());
    run_child(plan, parent, go_read.get(), err_write.get(), netns.get(), log.get(),
              cwd.empty() ? nullptr : cwd.c_str());
  }
  go_read.reset();
  err_write.reset();
  ::setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  auto kill_and_reap = [pid] {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  };
  try {
    state.add_process_group(pid);
  } catch (...) {
    kill_and_reap();
    throw;
  }
  [[maybe_unused]] ssize_t sent = ::write(go_write.get(), "g", 1);
  go_write.reset();

  ChildFailure failure{};
  ssize_t got;
  while ((got = ::read(err_read.get(), &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  if (got == 0) return pid;  // exec closed the pipe: the program is running
  kill_and_reap();
  state.remove_process_group(pid);
  throw HarnessError(what + ": " + step_name(failure.step) + " of `" + *exe +
                     "` failed: " + os::strerror_string(failure.err));
}

}  // namespace fencecheck
