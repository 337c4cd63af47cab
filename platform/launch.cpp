#include "platform/launch.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

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

// "was killed by signal 9 (SIGKILL)" or "exited with code 1", of a wait status.
std::string describe_death(int status) {
  if (!WIFSIGNALED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  const char* abbrev = ::sigabbrev_np(WTERMSIG(status));
  return "was killed by signal " + std::to_string(WTERMSIG(status)) + (abbrev ? std::string(" (SIG") + abbrev + ")" : "");
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

// What the child needs, in memory it may read after the clone (the controller's own while
// it shares it; a copy after a fork). cwd: where to run; when it is optional (the
// controller's own, after entering a mount namespace where it may not exist), a failed
// chdir leaves the child at the node's root. pid_write: where the child sends its pid
// (-1 when forked: the parent knows it from fork()).
struct ChildArgs {
  const ExecPlan* plan;
  pid_t parent;
  int go_read, go_write, err_read, err_write, pid_read, pid_write;
  const std::vector<int>* namespace_fds;
  int log_fd;
  const char* cwd;
  bool cwd_optional;
};

// Only system calls from here to execve: a child sharing the controller's memory must not
// touch its heap, and a forked one inherits locks other threads held.
[[noreturn]] void run_child(const ChildArgs& a) {
  // The child must see EOF on `go` if the controller dies, so it drops the write end.
  ::close(a.go_write);
  ::close(a.err_read);
  if (a.pid_read >= 0) ::close(a.pid_read);
  const int error_fd = a.err_write;
  // Every signal arrives blocked (the controller's handlers must never run here); ignored
  // signals and the blocked mask survive exec, so the child resets both, handlers first.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Died before prctl? (Forked into a node's PID namespace, the parent is outside it and
  // getppid() is 0: the `go` pipe's EOF below tells instead.)
  const pid_t pp = ::getppid();
  if (pp != a.parent && pp != 0) child_fail(error_fd, Step::kParentGone);
  if (::setpgid(0, 0) != 0) child_fail(error_fd, Step::kProcessGroup);
  if (a.pid_write >= 0) {
    const pid_t self = ::getpid();
    if (::write(a.pid_write, &self, sizeof self) != static_cast<ssize_t>(sizeof self)) {
      child_fail(error_fd, Step::kParentGone);
    }
    ::close(a.pid_write);
  }
  char go = 0;
  while (::read(a.go_read, &go, 1) < 0 && errno == EINTR) {
  }
  if (go != 'g') child_fail(error_fd, Step::kParentGone);
  for (int fd : *a.namespace_fds) {
    if (::setns(fd, 0) != 0) child_fail(error_fd, Step::kNamespace);
  }
  if (a.cwd && ::chdir(a.cwd) != 0 && !a.cwd_optional) child_fail(error_fd, Step::kCwd);
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(a.log_fd, 1) < 0 || ::dup2(a.log_fd, 2) < 0) {
    child_fail(error_fd, Step::kStdio);
  }
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // no controller fd leaks into servers
  ::execve(a.plan->exe.c_str(), a.plan->argv.data(), a.plan->envp.data());
  child_fail(error_fd, Step::kExec);
}

int child_main(void* args) { run_child(*static_cast<const ChildArgs*>(args)); }

// The child's stack while it shares the controller's memory; unmapped once it has exec'd.
class ChildStack {
 public:
  static constexpr std::size_t kBytes = 256 * 1024;
  ChildStack() : base_(::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)) {
    if (base_ == MAP_FAILED) throw HarnessError("cannot map a stack for a child: " + os::strerror_string(errno));
  }
  ~ChildStack() { ::munmap(base_, kBytes); }
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  void* top() const { return static_cast<char*>(base_) + kBytes; }

 private:
  void* base_;
};

// Blocks every signal of the calling thread for its lifetime: a child starts with them
// blocked and resets the handlers it inherited before it lets any arrive.
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old_);
  }
  ~SignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

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
  // Named ends, not structured bindings: the admitter lambda below captures them, which
  // clang before 16 (the fuzz build's) refuses for bindings.
  PipeEnds go = make_pipe(), err = make_pipe();
  UniqueFd &go_read = go.read, &go_write = go.write, &err_read = err.read, &err_write = err.write;
  const pid_t parent = ::getpid();
  auto kill_and_reap = [](pid_t pid) {  // returns the wait status
    int status = 0;
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  };
  // The controller's half of the handshake: the group is on the record, and in its
  // cgroups, before the child may exec. Throws (having undone the record) on failure.
  auto admit = [&](pid_t pid) {
    ::setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
    state.add_process_group(pid);
    try {
      join_cgroups(pid, entry.cgroups);
    } catch (const HarnessError& e) {
      state.remove_process_group(pid);
      throw HarnessError(what + ": " + e.what());
    }
  };
  ChildArgs args{&plan, parent, go_read.get(), go_write.get(), err_read.get(), err_write.get(), -1, -1,
                 &namespace_fds, log.get(), cwd.empty() ? nullptr : cwd.c_str(), cwd_optional};
  pid_t pid = -1;
  // The child's group is on the record and it was told to go on. A cloned child that died
  // before it sent its pid never was: it cannot have exec'd, although its end of the error
  // pipe closes just as an exec's does.
  bool admitted = false;
  if (entry.pid_namespace.empty()) {
    // clone(CLONE_VM | CLONE_VFORK), as posix_spawn does: a fork copied the page tables of
    // the whole controller and made its memory copy-on-write, 60 ms per child on the test
    // VM, one after another. This thread sleeps until the child has exec'd or exited; the
    // child sends its pid to a second thread, which admits it and says go.
    PipeEnds pid_pipe = make_pipe();
    UniqueFd &pid_read = pid_pipe.read, &pid_write = pid_pipe.write;
    args.pid_read = pid_read.get();
    args.pid_write = pid_write.get();
    std::exception_ptr refused;
    std::thread admitter([&] {
      pid_t child = 0;
      ssize_t got;
      while ((got = ::read(pid_read.get(), &child, sizeof child)) < 0 && errno == EINTR) {
      }
      if (got == static_cast<ssize_t>(sizeof child)) {
        try {
          admit(child);
          admitted = true;
          [[maybe_unused]] ssize_t sent = ::write(go_write.get(), "g", 1);
        } catch (...) {
          refused = std::current_exception();
        }
      }
      go_write.reset();  // EOF: a child still waiting gives up
    });
    {
      ChildStack stack;
      SignalsBlocked blocked;
      pid = ::clone(child_main, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
    }
    const int clone_errno = errno;
    pid_write.reset();  // the child has exec'd or exited: the admitter's read ends
    admitter.join();
    if (pid < 0) throw HarnessError(what + ": clone: " + os::strerror_string(clone_errno));
    if (refused) {
      kill_and_reap(pid);
      std::rethrow_exception(refused);
    }
  } else {
    // A child cannot share memory with a parent in another PID namespace: fork it there.
    // setns(CLONE_NEWPID) changes only where this thread's next child is born; ours is
    // restored right after the fork.
    UniqueFd node_pidns(::open(entry.pid_namespace.c_str(), O_RDONLY | O_CLOEXEC));
    UniqueFd own_pidns(::open("/proc/thread-self/ns/pid", O_RDONLY | O_CLOEXEC));
    if (!node_pidns.valid() || !own_pidns.valid() || ::setns(node_pidns.get(), CLONE_NEWPID) != 0) {
      throw HarnessError(what + ": cannot enter the PID namespace " + entry.pid_namespace + ": " +
                         os::strerror_string(errno));
    }
    {
      SignalsBlocked blocked;
      pid = ::fork();
      if (pid == 0) run_child(args);
    }
    const int fork_errno = errno;
    if (::setns(own_pidns.get(), CLONE_NEWPID) != 0) {
      // Every later child would be born in the node's namespace: never go on like that.
      std::abort();
    }
    if (pid < 0) throw HarnessError(what + ": fork: " + os::strerror_string(fork_errno));
    try {
      admit(pid);
    } catch (...) {
      kill_and_reap(pid);
      throw;
    }
    admitted = true;
    [[maybe_unused]] ssize_t sent = ::write(go_write.get(), "g", 1);
    go_write.reset();
  }
  go_read.reset();
  err_write.reset();

  ChildFailure failure{};
  ssize_t got;
  while ((got = ::read(err_read.get(), &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  if (got == 0 && admitted) return pid;  // exec closed the pipe: the program is running
  if (got == 0) {  // killed (SIGKILL, a seccomp filter, ...) before it sent its pid
    throw HarnessError(what + ": `" + *exe + "` " + describe_death(kill_and_reap(pid)) +
                       " before it sent its pid to the controller; it never ran");
  }
  kill_and_reap(pid);
  state.remove_process_group(pid);
  throw HarnessError(what + ": " + step_name(failure.step) + " of `" + *exe +
                     "` failed: " + os::strerror_string(failure.err));
}

}  // namespace fencecheck
