#include "platform/os_util.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "platform/runtime.h"

extern char** environ;

namespace fencecheck::os {

namespace {

// The fields after the command name; the name itself may contain spaces and ')'.
std::optional<std::vector<std::string>> stat_fields_after_comm(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close_paren + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw HarnessError("pipe: " + strerror_string(errno));
  }
  ~Pipe() { close_both(); }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  void close_both() { close_end(0), close_end(1); }
};

// A child that exits before reading all its input must not kill the controller with
// SIGPIPE: block it on this thread while we write, then discard it if it was raised.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_);
  }
  ~SigpipeBlock() {
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_set_{};
  sigset_t old_{};
};

std::string quote_argv(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'";
  }
  return s;
}

}  // namespace

std::string strerror_string(int err) { return std::strerror(err); }

void write_sync_close(int fd, const std::string& text, const std::string& name) {
  auto fail = [&](const char* step, int err) {
    throw HarnessError(std::string("cannot ") + step + " " + name + ": " + strerror_string(err));
  };
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      fail("write", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    fail("fsync", err);
  }
  // close() may report a deferred write error (NFS, some FUSE stores); it is not retried
  // on EINTR, since Linux has released the descriptor by then.
  if (::close(fd) != 0) fail("close", errno);
}

std::string install_hint(const std::string& program) {
  static const std::map<std::string, std::string> packages = {
      {"ip", "iproute2"},          {"iptables-nft", "iptables"},
      {"iptables-legacy", "iptables"}, {"redis-server", "redis-server"},
      {"etcd", "etcd-server"},     {"zkServer.sh", "zookeeper"},
      {"postgres", "postgresql"},  {"initdb", "postgresql"}};
  auto it = packages.find(std::filesystem::path(program).filename().string());
  std::string package = it == packages.end() ? "the Debian package that provides it"
                                             : "the Debian package " + it->second;
  return "install " + package + ", e.g. with scripts/setup.sh";
}

std::optional<std::uint64_t> process_start_time(int pid) {
  auto fields = stat_fields_after_comm(pid);
  // Field 22 overall is index 19 after the pid and command name.
  if (!fields || fields->size() < 20) return std::nullopt;
  return std::stoull((*fields)[19]);
}

bool process_is(int pid, std::optional<std::uint64_t> start_time) {
  if (pid <= 0) return false;
  auto actual = process_start_time(pid);
  return actual && (!start_time || *actual == *start_time);
}

char process_state(int pid) {
  auto fields = stat_fields_after_comm(pid);
  return fields && !fields->empty() ? (*fields)[0][0] : '\0';
}

std::vector<int> threads_of(int pid) {
  std::vector<int> tids;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
      tids.push_back(std::stoi(name));
    }
  }
  return tids;
}

char thread_state(int pid, int tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return '\0';
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '\0';
}

std::vector<int> group_members(int pgid) {
  std::vector<int> members;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    int pid = std::stoi(name);
    auto fields = stat_fields_after_comm(pid);
    // After the name: state, ppid, pgrp.
    if (fields && fields->size() > 2 && (*fields)[0] != "Z" && std::stoi((*fields)[2]) == pgid) {
      members.push_back(pid);
    }
  }
  return members;
}

bool wait_until_group_gone(int pgid, int timeout_ms) {
  for (int waited = 0;; waited += 10) {
    if (group_members(pgid).empty()) return true;
    if (waited >= timeout_ms) return false;
    ::usleep(10 * 1000);
  }
}

std::vector<std::string> program_search_path() {
  std::vector<std::string> dirs;
  const char* path = std::getenv("PATH");
  std::istringstream split(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(split, dir, ':');) dirs.push_back(dir.empty() ? "." : dir);
  for (const char* extra : {"/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/share/zookeeper/bin"}) {
    dirs.emplace_back(extra);
  }
  std::vector<std::string> postgres;  // /usr/lib/postgresql/<version>/bin
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    postgres.push_back((entry.path() / "bin").string());
  }
  std::sort(postgres.begin(), postgres.end(), [](const std::string& a, const std::string& b) {
    return ::strverscmp(a.c_str(), b.c_str()) > 0;
  });
  dirs.insert(dirs.end(), postgres.begin(), postgres.end());
  return dirs;
}

std::optional<std::string> find_executable(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    return executable(name) ? std::optional(name) : std::nullopt;
  }
  for (const std::string& dir : program_search_path()) {
    std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return std::nullopt;
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& input) {
  if (argv.empty()) throw HarnessError("run_command: empty command");
  Pipe in, out;
  // Our end of stdin must not block: poll() only promises room for PIPE_BUF bytes, and a
  // blocking write of more would wait for a child that is itself blocked writing output we
  // are not reading. (The child's end is a separate open file, and stays blocking.)
  if (::fcntl(in.fd[1], F_SETFL, O_NONBLOCK) != 0) {
    throw HarnessError("run_command: cannot make the stdin pipe non-blocking: " + strerror_string(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 2);
  auto exe = find_executable(argv[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = exe ? posix_spawn(&pid, exe->c_str(), &actions, nullptr, args.data(), environ) : ENOENT;
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw HarnessError("cannot run `" + argv[0] + "`: " + strerror_string(rc) + " (" +
                       install_hint(argv[0]) + ")");
  }
  in.close_end(0);
  out.close_end(1);

  // Feed stdin and drain stdout together so neither side can block the other.
  SigpipeBlock no_sigpipe;
  CommandResult result;
  std::size_t written = 0;
  if (input.empty()) in.close_end(1);
  char buf[4096];
  while (out.fd[0] >= 0) {
    pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {in.fd[1], POLLOUT, 0}};
    int n = ::poll(fds, in.fd[1] >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (fds[0].revents) {
      ssize_t got = ::read(out.fd[0], buf, sizeof buf);
      if (got > 0) result.output.append(buf, static_cast<std::size_t>(got));
      else if (got == 0 || errno != EINTR) out.close_end(0);
    }
    if (in.fd[1] >= 0 && fds[1].revents) {
      ssize_t put = ::write(in.fd[1], input.data() + written, input.size() - written);
      if (put > 0) written += static_cast<std::size_t>(put);
      if (put < 0 && errno != EINTR && errno != EAGAIN) in.close_end(1);
      if (written == input.size()) in.close_end(1);
    }
  }
  in.close_end(1);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string check_command(const std::vector<std::string>& argv, const std::string& what,
                          const std::string& input) {
  auto result = run_command(argv, input);
  if (result.status != 0) {
    std::string out = result.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    throw HarnessError(what + " failed: `" + quote_argv(argv) + "` exited with " +
                       std::to_string(result.status) + (out.empty() ? "" : ": " + out));
  }
  return result.output;
}

}  // namespace fencecheck::os
