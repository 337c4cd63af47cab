// Test support: the processes a controller (a run, a suite) started, read from /proc, for
// tests that kill the controller and then check that nothing of it is left. A process is
// named by pid and start time (field 22 of /proc/<pid>/stat), so that a pid reused after
// the kill is never taken for a survivor.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/proc_stat.h"
#include "tests/support/command.h"

namespace fencecheck::testing {

// Every live (not zombie) descendant of root: pid → start time.
inline std::map<int, std::string> descendants(int root) {
  std::map<int, std::string> out;
  for (const os::ProcStat& s : os::descendants_of(root)) {
    if (s.state != 'Z') out[s.pid] = std::to_string(s.start_time);
  }
  return out;
}

inline std::string comm(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string c;
  std::getline(in, c);
  return c;
}

// The processes of `processes` still alive after waiting up to timeout for them to go (a
// killed PID namespace takes the kernel a moment). "pid (comm)" each.
inline std::vector<std::string> survivors(const std::map<int, std::string>& processes,
                                          std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::vector<std::string> alive;
    for (const auto& [pid, start] : processes) {
      auto info = os::read_proc_stat(pid);
      if (info && info->state != 'Z' && std::to_string(info->start_time) == start) {
        alive.push_back(std::to_string(pid) + " (" + comm(pid) + ")");
      }
    }
    if (alive.empty() || std::chrono::steady_clock::now() > until) return alive;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Every process a controller starts while it runs: a thread samples descendants(root)
// every 100 ms until stop(), which returns all it saw (pid → start time). A process a fault
// pauses lives for the pause, so a sample finds it. Not copyable; stop() from one thread.
class ProcessWatch {
 public:
  explicit ProcessWatch(int root)
      : thread_([this, root] {
          while (!done_) {
            for (const auto& [pid, start] : descendants(root)) seen_.emplace(pid, start);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }) {}
  ~ProcessWatch() { stop(); }
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;
  const std::map<int, std::string>& stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return seen_;
  }

 private:
  std::atomic<bool> done_{false};
  std::map<int, std::string> seen_;  // written by thread_ alone until it is joined
  std::thread thread_;
};

// The run id in the state file whose controller is pid (root's state directory).
inline std::optional<std::string> run_id_of_controller(pid_t controller) {
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator("/run/fencecheck", ec)) {
    if (f.path().extension() != ".json") continue;
    auto s = nlohmann::json::parse(std::ifstream(f.path()), nullptr, false);
    if (!s.is_discarded() && s.is_object() && s.value("controller", nlohmann::json::object()).value("pid", 0) == controller) {
      return s.value("run_id", std::string());
    }
  }
  return std::nullopt;
}

// The crash of a run's controller and the clean after it: SIGKILLs controller, reaps it,
// runs `<fencecheck> clean --run <run_id>`, expects it to succeed and none of `processes`
// (descendants() taken while it ran) to survive it. Returns the clean's output.
inline std::string kill_controller_then_clean(pid_t controller, const std::string& run_id,
                                              const std::string& fencecheck,
                                              const std::map<int, std::string>& processes) {
  ::kill(controller, SIGKILL);
  ::waitpid(controller, nullptr, 0);
  CommandResult clean = run_command(fencecheck + " clean --run " + run_id);
  EXPECT_EQ(clean.code, 0) << clean.out;
  for (const auto& p : survivors(processes)) ADD_FAILURE() << "process " << p << " survived clean";
  return clean.out;
}

}  // namespace fencecheck::testing
