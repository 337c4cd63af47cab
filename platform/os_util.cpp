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
#include <sstream>

#include "platform/runtime.h"
#include "platform/unique_fd.h"

extern char** environ;

namespace fencecheck::os {

namespace {

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

void write_sync_close(int fd, const std::string& text, const std::string& name, bool sync) {
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
  if (sync && ::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    fail("fsync", err);
  }
  // close() may report a deferred write error (NFS, some FUSE stores); it is not retried
  // on EINTR, since Linux has released the descriptor by then.
  if (::close(fd) != 0) fail("close", errno);
}

std::string install_hint(const std::string& debian_package) {
  return "install " +
         (debian_package.empty() ? std::string("the Debian package that provides it")
                                 : "the Debian package " + debian_package) +
         ", e.g. with scripts/setup.sh";
}

namespace {

// pattern with its one '*' component expanded, newest version first; pattern itself if none.
std::vector<std::string> expand_version_dirs(const std::string& pattern) {
  auto star = pattern.find('*');
  if (star == std::string::npos) return {pattern};
  // One '*' standing for a whole path component: /usr/lib/<tool>/*/bin.
  const auto slash = pattern.rfind('/', star);
  const std::string parent = pattern.substr(0, slash == std::string::npos ? 0 : slash);
  const std::string rest = pattern.substr(star + 1);
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent.empty() ? "." : parent, ec)) {
    dirs.push_back(entry.path().string() + rest);
  }
  std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) {
    return ::strverscmp(a.c_str(), b.c_str()) > 0;
  });
  return dirs;
}

}  // namespace

std::vector<std::string> program_search_path(const std::vector<std::string>& extra_dirs) {
  std::vector<std::string> dirs;
  const char* path = std::getenv("PATH");
  std::istringstream split(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(split, dir, ':');) dirs.push_back(dir.empty() ? "." : dir);
  for (const char* sbin : {"/usr/local/sbin", "/usr/sbin", "/sbin"}) dirs.emplace_back(sbin);
  for (const std::string& pattern : extra_dirs) {
    for (std::string& dir : expand_version_dirs(pattern)) dirs.push_back(std::move(dir));
  }
  return dirs;
}

std::optional<std::string> find_executable(const std::string& name,
                                           const std::vector<std::string>& extra_dirs) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    return executable(name) ? std::optional(name) : std::nullopt;
  }
  for (const std::string& dir : program_search_path(extra_dirs)) {
    std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return std::nullopt;
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& input,
                          std::optional<std::chrono::milliseconds> timeout) {
  return run_command(argv, input, timeout ? Deadline::after(*timeout) : Deadline::only_cancel({}));
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& input, const Deadline& deadline) {
  if (argv.empty()) throw HarnessError("run_command: empty command");
  PipeEnds in = make_pipe(), out = make_pipe();
  // Our end of stdin must not block: poll() only promises room for PIPE_BUF bytes, and a
  // blocking write of more would wait for a child that is itself blocked writing output we
  // are not reading. (The child's end is a separate open file, and stays blocking.)
  if (::fcntl(in.write.get(), F_SETFL, O_NONBLOCK) != 0) {
    throw HarnessError("run_command: cannot make the stdin pipe non-blocking: " + strerror_string(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), 2);
  auto exe = find_executable(argv[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = exe ? posix_spawn(&pid, exe->c_str(), &actions, nullptr, args.data(), environ) : ENOENT;
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw HarnessError("cannot run `" + argv[0] + "`: " + strerror_string(rc) + " (" +
                       install_hint("") + ")");
  }
  in.read.reset();
  out.write.reset();

  // Feed stdin and drain stdout together so neither side can block the other.
  SigpipeBlock no_sigpipe;
  CommandResult result;
  std::size_t written = 0;
  if (input.empty()) in.write.reset();
  char buf[4096];
  while (out.read.get() >= 0) {
    pollfd fds[2] = {{out.read.get(), POLLIN, 0}, {in.write.get(), POLLOUT, 0}};
    // Woken every 50 ms for the deadline's cancel check (when it has one).
    const std::chrono::milliseconds left = deadline.left();
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);  // whatever it still holds open (a grandchild's pipe end) no longer matters
      result.timed_out = true;
      result.cancelled = deadline.cancelled();
      break;
    }
    int wait_ms = -1;  // no time limit: until there is something to read or write
    if (left != std::chrono::milliseconds::max()) wait_ms = static_cast<int>(std::min<std::int64_t>(left.count(), 1 << 30));
    if (deadline.cancel()) wait_ms = wait_ms < 0 ? 50 : std::min(wait_ms, 50);
    int n = ::poll(fds, in.write.get() >= 0 ? 2 : 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) continue;
    if (fds[0].revents) {
      ssize_t got = ::read(out.read.get(), buf, sizeof buf);
      if (got > 0) result.output.append(buf, static_cast<std::size_t>(got));
      else if (got == 0 || errno != EINTR) out.read.reset();
    }
    if (in.write.get() >= 0 && fds[1].revents) {
      ssize_t put = ::write(in.write.get(), input.data() + written, input.size() - written);
      if (put > 0) written += static_cast<std::size_t>(put);
      if (put < 0 && errno != EINTR && errno != EAGAIN) in.write.reset();
      if (written == input.size()) in.write.reset();
    }
  }
  in.write.reset();
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

namespace fencecheck::os {

std::string file_tail(const std::string& path, std::size_t lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "(no log at " + path + ")";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff start = std::max<std::streamoff>(0, size - 64 * 1024);
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> all;
  std::istringstream split(text);
  for (std::string line; std::getline(split, line);) all.push_back(line);
  std::string tail;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) tail += all[i] + "\n";
  return tail.empty() ? "(log is empty)" : tail;
}

}  // namespace fencecheck::os
