// Test support: the processes a controller (a run, a suite) started, read from /proc, for
// tests that kill the controller and then check that nothing of it is left. A process is
// named by pid and start time (field 22 of /proc/<pid>/stat), so that a pid reused after
// the kill is never taken for a survivor.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck::testing {

struct ProcInfo {
  int ppid = 0;
  std::string start;  // field 22
};

// nullopt when pid is gone or a zombie.
inline std::optional<ProcInfo> proc_info(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  std::vector<std::string> f;
  for (std::string x; rest >> x;) f.push_back(x);
  if (f.size() < 20 || f[0] == "Z") return std::nullopt;
  return ProcInfo{std::stoi(f[1]), f[19]};
}

// Every live descendant of root: pid → start time.
inline std::map<int, std::string> descendants(int root) {
  std::map<int, ProcInfo> all;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto info = proc_info(std::stoi(name))) all[std::stoi(name)] = *info;
  }
  std::map<int, std::string> out;
  std::set<int> frontier = {root};
  while (!frontier.empty()) {
    std::set<int> next;
    for (const auto& [pid, info] : all) {
      if (frontier.count(info.ppid) && !out.count(pid)) {
        out[pid] = info.start;
        next.insert(pid);
      }
    }
    frontier = std::move(next);
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
      auto info = proc_info(pid);
      if (info && info->start == start) alive.push_back(std::to_string(pid) + " (" + comm(pid) + ")");
    }
    if (alive.empty() || std::chrono::steady_clock::now() > until) return alive;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

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

}  // namespace fencecheck::testing
