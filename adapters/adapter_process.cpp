#include "adapters/adapter_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "platform/errors.h"
#include "platform/os_util.h"

extern char** environ;

namespace fencecheck {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A line longer than this is no protocol message; it is handed on cut, and fails to parse.
constexpr std::size_t kMaxLine = 1 << 20;

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended (status " + std::to_string(status) + ")";
}

int millis_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

}  // namespace

AdapterProcess::AdapterProcess(Options options) : options_(std::move(options)), wake_(make_pipe()) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    throw HarnessError("cannot make a socket pair for adapter " + options_.program.string() + ": " +
                       os::strerror_string(errno));
  }
  socket_.reset(ends[0]);
  UniqueFd child_end(ends[1]);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, child_end.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, child_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, options_.log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, options_.program.parent_path().c_str());
  // The worker's threads may block signals; the adapter starts with none blocked and the
  // default action for those that end it (SIGPIPE included: its stdout is a socket).
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::string program = options_.program.string();
  char* argv[] = {program.data(), nullptr};
  int rc = ::posix_spawn(&pid_, program.c_str(), &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw HarnessError("cannot start adapter " + program + ": " + os::strerror_string(rc));
  }
  reader_ = std::thread([this] { read_lines(); });
}

AdapterProcess::~AdapterProcess() {
  // The reader stops first, so that the kill below is never taken for an unprompted end.
  char byte = 0;
  [[maybe_unused]] ssize_t n = ::write(wake_.write.get(), &byte, 1);
  if (reader_.joinable()) reader_.join();
  ::shutdown(socket_.get(), SHUT_WR);  // EOF on its stdin
  {
    // It must not outlive this object; once reaped, its pid may be someone else's.
    std::lock_guard lock(reap_mu_);
    if (!reaped_) ::kill(pid_, SIGKILL);
  }
  reap(milliseconds(1000));
}

bool AdapterProcess::send(const std::string& text, Clock::time_point deadline) {
  std::lock_guard lock(send_mu_);
  std::string line = text + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::send(socket_.get(), line.data() + done, line.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    if (Clock::now() >= deadline) return false;
    pollfd p{socket_.get(), POLLOUT, 0};
    ::poll(&p, 1, std::max(1, millis_until(deadline)));
  }
  return true;
}

void AdapterProcess::read_lines() {
  std::string buffer;
  char chunk[4096];
  for (;;) {
    pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {wake_.read.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) return;  // the destructor: no more callbacks
    ssize_t n = ::recv(socket_.get(), chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      options_.on_line(buffer.substr(start, nl - start));
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxLine) {
      options_.on_line(buffer);
      buffer.clear();
    }
  }
  if (!buffer.empty()) options_.on_line(buffer);  // a last line without its newline
  options_.on_end(reap(milliseconds(1000)));
}

std::string AdapterProcess::reap(milliseconds wait) {
  std::lock_guard lock(reap_mu_);
  if (reaped_) return "ended";
  auto deadline = Clock::now() + wait;
  bool killed = false;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      std::string how = describe_status(status);
      return killed ? "closed its output but kept running (killed after " + std::to_string(wait.count()) + " ms)"
                    : how;
    }
    if (r < 0 && errno != EINTR) {
      reaped_ = true;
      return "ended (it cannot be waited for: " + os::strerror_string(errno) + ")";
    }
    if (Clock::now() >= deadline) {
      if (killed) return "did not end even after SIGKILL";
      ::kill(pid_, SIGKILL);
      killed = true;
      deadline = Clock::now() + milliseconds(1000);
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
}

}  // namespace fencecheck
