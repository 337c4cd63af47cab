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
#include <optional>

#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime.h"
#include "platform/unique_fd.h"

extern char** environ;

namespace fencecheck {

namespace {

// Steps the child can fail at, reported back over the error pipe.
enum class Step : int { kParentGone = 1, kNamespace, kProcessGroup, kCwd, kStdio, kExec };

const char* step_name(Step s) {
  switch (s) {
    case Step::kParentGone: return "the controller exited during start-up";
    case Step::kNamespace: return "entering the node's namespaces";
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

// cwd: where to run; when it is optional (the controller's own, after entering a mount
// namespace where it may not exist), a failed chdir leaves the child at the node's root.
[[noreturn]] void run_child(const ExecPlan& plan, pid_t parent, int go_fd, int error_fd,
                            const std::vector<int>& namespace_fds, int log_fd, const char* cwd,
                            bool cwd_optional) {
  // Ignored signals and the blocked mask survive exec; the child starts clean.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);

  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Died before prctl? (Forked into a node's PID namespace, the parent is outside it and
  // getppid() is 0: the `go` pipe's EOF below tells instead.)
  const pid_t pp = ::getppid();
  if (pp != parent && pp != 0) child_fail(error_fd, Step::kParentGone);
  if (::setpgid(0, 0) != 0) child_fail(error_fd, Step::kProcessGroup);
  char go = 0;
  while (::read(go_fd, &go, 1) < 0 && errno == EINTR) {
  }
  if (go != 'g') child_fail(error_fd, Step::kParentGone);
  for (int fd : namespace_fds) {
    if (::setns(fd, 0) != 0) child_fail(error_fd, Step::kNamespace);
  }
  if (cwd && ::chdir(cwd) != 0 && !cwd_optional) child_fail(error_fd, Step::kCwd);
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(log_fd, 1) < 0 || ::dup2(log_fd, 2) < 0) {
    child_fail(error_fd, Step::kStdio);
  }
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // no controller fd leaks into servers
  ::execve(plan.exe.c_str(), plan.argv.data(), plan.envp.data());
  child_fail(error_fd, Step::kExec);
}

// argv0 looked up in the node's file system `root` (a container's): a path as given, a
// bare name in the usual PATH directories. Symbolic links are not followed here (an
// absolute link means the node's root, not ours): exec, inside the node, follows them.
std::optional<std::string> find_in_root(const std::filesystem::path& root, const std::string& argv0) {
  auto present = [&](const std::string& path) {
    std::error_code ec;
    auto st = std::filesystem::symlink_status(root / path.substr(1), ec);
    return !ec && (st.type() == std::filesystem::file_type::regular ||
                   st.type() == std::filesystem::file_type::symlink);
  };
  if (argv0.find('/') != std::string::npos) {
    if (argv0[0] == '/' && present(argv0)) return argv0;
    return std::nullopt;
  }
  for (const char* dir : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    std::string path = std::string(dir) + "/" + argv0;
    if (present(path)) return path;
  }
  return std::nullopt;
}

// Moves pid into each cgroup directory. Throws HarnessError naming the one that refused.
void join_cgroups(pid_t pid, const std::vector<std::filesystem::path>& cgroups) {
  for (const auto& dir : cgroups) {
    const std::string file = (dir / "cgroup.procs").string();
    UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
    const std::string text = std::to_string(pid);
    if (!fd.valid() || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      throw HarnessError("cannot move the process into " + file + ": " + os::strerror_string(errno));
    }
  }
}

}  // namespace

int launch_child(const ProcessSpec& spec, const NodeEntry& entry, RunState& state) {
  const std::string what = "cannot start " + spec.name + " on node " + spec.node;
  if (spec.argv.empty() || spec.argv[0].empty()) throw HarnessError(what + ": empty command");
  if (spec.log.empty()) throw HarnessError(what + ": no log file given");
  auto exe = entry.root.empty() ? os::find_executable(spec.argv[0]) : find_in_root(entry.root, spec.argv[0]);
  if (!exe) {
    throw HarnessError(what + ": `" + spec.argv[0] + "` is not installed or not in PATH" +
                       (entry.root.empty() ? "" : " of the node's file system (its image)") + " (" +
                       os::install_hint("") + ")");
  }
  std::error_code ec;
  std::filesystem::create_directories(spec.log.parent_path(), ec);
  UniqueFd log(::open(spec.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log.get() < 0) {
    throw HarnessError(what + ": cannot open log " + spec.log.string() + ": " +
                       os::strerror_string(errno));
  }
  std::vector<UniqueFd> namespaces;
  std::vector<int> namespace_fds;
  for (const auto& path : entry.namespaces) {
    namespaces.emplace_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!namespaces.back().valid()) {
      throw HarnessError(what + ": cannot open " + path + ": " + os::strerror_string(errno));
    }
    namespace_fds.push_back(namespaces.back().get());
  }
  ExecPlan plan = plan_exec(spec, *exe);
  std::string cwd = spec.cwd.string();
  // A new mount namespace starts the child at its root: it keeps the controller's working
  // directory when the node shares it (the docker runtime mounts the run's directories).
  const bool cwd_optional = cwd.empty() && !entry.root.empty();
  if (cwd_optional) cwd = std::filesystem::current_path().string();
  auto [go_read, go_write] = make_pipe();
  auto [err_read, err_write] = make_pipe();

  const pid_t parent = ::getpid();
  // setns(CLONE_NEWPID) changes only where this thread's next child is born; ours is
  // restored right after the fork.
  UniqueFd node_pidns, own_pidns;
  if (!entry.pid_namespace.empty()) {
    node_pidns.reset(::open(entry.pid_namespace.c_str(), O_RDONLY | O_CLOEXEC));
    own_pidns.reset(::open("/proc/thread-self/ns/pid", O_RDONLY | O_CLOEXEC));
    if (!node_pidns.valid() || !own_pidns.valid() || ::setns(node_pidns.get(), CLONE_NEWPID) != 0) {
      throw HarnessError(what + ": cannot enter the PID namespace " + entry.pid_namespace + ": " +
                         os::strerror_string(errno));
    }
  }
  const pid_t pid = ::fork();
  const int fork_errno = errno;
  if (pid != 0 && own_pidns.valid() && ::setns(own_pidns.get(), CLONE_NEWPID) != 0) {
    // Every later child would be born in the node's namespace: never go on like that.
    std::abort();
  }
  errno = fork_errno;
  if (pid < 0) throw HarnessError(what + ": fork: " + os::strerror_string(errno));
  if (pid == 0) {
    // The child must see EOF on `go` if the controller dies, so it drops the write end.
    ::close(go_write.get());
    ::close(err_read.get());
    run_child(plan, parent, go_read.get(), err_write.get(), namespace_fds, log.get(),
              cwd.empty() ? nullptr : cwd.c_str(), cwd_optional);
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
  try {
    join_cgroups(pid, entry.cgroups);
  } catch (const HarnessError& e) {
    kill_and_reap();
    state.remove_process_group(pid);
    throw HarnessError(what + ": " + e.what());
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
