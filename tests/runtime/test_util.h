// Helpers shared by the runtime tests.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "platform/unique_fd.h"

namespace fencecheck::testing {

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fc-rt-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Polls pred every 10 ms until it holds or timeout passes; returns its last value.
inline bool eventually(const std::function<bool()>& pred,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Runs body in a forked child that never returns into the test framework: it exits 0, or
// 1 if body throws (so a failing child cannot go on to run the rest of the suite).
template <typename Body>
pid_t fork_child(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    try {
      body();
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  return pid;
}

// A TCP socket listening on 127.0.0.1 at a port the kernel picked; aborts if it cannot
// (a test machine without loopback is no place to run these tests).
struct LoopbackListener {
  UniqueFd socket;
  std::uint16_t port = 0;
};
inline LoopbackListener loopback_listener() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (!fd.valid() || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0 || ::listen(fd.get(), 4) != 0) {
    std::abort();
  }
  return {std::move(fd), ntohs(addr.sin_port)};
}

inline bool file_has_content(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::file_size(p, ec) > 0 && !ec;
}

}  // namespace fencecheck::testing
