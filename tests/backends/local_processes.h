// Test support: real processes on 127.0.0.1 for the backend, worker and benchmark tests,
// started exactly as a run starts its servers: through the platform's local Runtime (its
// Supervisor), each in its own process group, with PR_SET_PDEATHSIG, recorded in a
// RunState. Nothing outlives a test, even one that fails an ASSERT halfway: destroying a
// LocalProcesses stops every process it started (SIGTERM, then SIGKILL after 2 s).
//
// RedisProcess: a throwaway redis-server on 127.0.0.1 with no persistence, ready to
// answer PING when constructed. Not thread-safe; throws (HarnessError, runtime_error)
// when a process cannot be started or does not become ready within 10 s.
#pragma once

#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/redis/redis_connection.h"
#include "platform/process.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "platform/tcp.h"
#include "tests/runtime/test_util.h"

namespace fencecheck::testing {

class LocalProcesses {
 public:
  LocalProcesses()
      : state_(RunState::new_run_id()), runtime_(make_runtime("local", state_.run_id(), state_)) {
    runtime_->create({kNode});
  }
  ~LocalProcesses() { runtime_->destroy(); }
  LocalProcesses(const LocalProcesses&) = delete;
  LocalProcesses& operator=(const LocalProcesses&) = delete;

  // argv[0]: a path, or a program found as os::find_executable finds it; stdout and
  // stderr go to log. Returns once the program has exec'd; the reference stays valid
  // until this LocalProcesses is destroyed.
  Process& spawn(std::vector<std::string> argv, const std::filesystem::path& log = "/dev/null") {
    ProcessSpec spec;
    spec.node = kNode;
    spec.name = std::filesystem::path(argv.at(0)).filename().string();
    spec.argv = std::move(argv);
    spec.log = log;
    return runtime_->spawn(std::move(spec));
  }
  Runtime& runtime() { return *runtime_; }
  // Stops every process started so far, the latest first.
  void stop_all() { runtime_->stop_all(); }

 private:
  static constexpr const char* kNode = "t1";
  RunState state_;
  std::unique_ptr<Runtime> runtime_;
};

// The exit code of p (128 + signal when killed) if it exits within timeout; nullopt
// while it still runs.
inline std::optional<int> exit_code_within(Process& p, std::chrono::milliseconds timeout) {
  if (!eventually([&] { return !p.alive(); }, timeout)) return std::nullopt;
  int status = p.exit_status().value_or(0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class RedisProcess {
 public:
  RedisProcess()
      : port_(free_loopback_port()),
        process_(processes_.spawn({"redis-server", "--bind", "127.0.0.1", "--port", std::to_string(port_),
                                   "--save", "", "--appendonly", "no", "--daemonize", "no",
                                   "--protected-mode", "no", "--dir",
                                   std::filesystem::temp_directory_path().string()})) {
    processes_.runtime().wait_ready(
        process_, [&] { return redis_ping("127.0.0.1", port_, std::chrono::milliseconds(200)); },
        std::chrono::seconds(10));
  }
  std::uint16_t port() const { return port_; }
  Process& process() { return process_; }

 private:
  LocalProcesses processes_;
  std::uint16_t port_;
  Process& process_;
};

}  // namespace fencecheck::testing
