// Test helpers: child processes that always die with the test, and a throwaway
// redis-server on 127.0.0.1. Used by the backend and worker integration tests.
//
// A ChildProcess runs in its own process group with PR_SET_PDEATHSIG(SIGKILL), and its
// destructor SIGCONTs and SIGKILLs the group and reaps it, so nothing outlives a test,
// even one that fails an ASSERT halfway.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/redis/redis_connection.h"

namespace fencecheck::testing {

// True once every thread of pid is stopped (SIGSTOP has fully taken effect).
inline bool all_threads_stopped(pid_t pid) {
  std::error_code ec;
  std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  bool any = false;
  for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream stat(t.path() / "stat");
    std::string line;
    std::getline(stat, line);
    std::size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return false;
    char state = line[close + 2];
    if (state != 'T' && state != 't') return false;
    any = true;
  }
  return any;
}

// Sends SIGSTOP to pid's group and waits until every thread of pid has stopped.
inline void pause_group(pid_t pid) {
  ::kill(-pid, SIGSTOP);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!all_threads_stopped(pid)) {
    if (std::chrono::steady_clock::now() > until) throw std::runtime_error("SIGSTOP did not take");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

class ChildProcess {
 public:
  // argv[0] is looked up in PATH; stdout and stderr go to log (or /dev/null).
  ChildProcess(const std::vector<std::string>& argv, const std::string& log = "/dev/null") {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);  // also in the parent, so signal() works at once
  }
  ~ChildProcess() { kill(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) const {
    if (!reaped_) ::kill(-pid_, sig);
  }
  // SIGSTOP is asynchronous: until every thread has stopped, a busy process may still
  // serve a request. Sends SIGSTOP and waits until all threads show state T.
  void pause() {
    if (!reaped_) pause_group(pid_);
  }
  void resume() { signal(SIGCONT); }

  // The exit code if it exits within timeout; nullopt otherwise (still running).
  std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (true) {
      int status = 0;
      if (!reaped_ && ::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        status_ = status;
      }
      if (reaped_) return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
      if (std::chrono::steady_clock::now() > until) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  void kill() {
    if (reaped_) return;
    ::kill(-pid_, SIGCONT);
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
    reaped_ = true;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
inline std::uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot find a free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// True if something accepts TCP connections on 127.0.0.1:port.
inline bool tcp_port_open(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// Polls check every 20 ms until it is true or timeout passes.
template <typename F>
bool eventually(F check, std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (check()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return check();
}

// redis-server on 127.0.0.1 with no persistence, ready to answer PING.
class RedisProcess {
 public:
  RedisProcess()
      : port_(free_port()),
        process_({"redis-server", "--bind", "127.0.0.1", "--port", std::to_string(port_),
                  "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode",
                  "no", "--dir", std::filesystem::temp_directory_path().string()}) {
    if (!eventually([&] { return redis_ping("127.0.0.1", port_, std::chrono::milliseconds(200)); },
                    std::chrono::seconds(10))) {
      throw std::runtime_error("redis-server did not start on port " + std::to_string(port_));
    }
  }
  std::uint16_t port() const { return port_; }
  ChildProcess& process() { return process_; }

 private:
  std::uint16_t port_;
  ChildProcess process_;
};

}  // namespace fencecheck::testing
