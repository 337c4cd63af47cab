#include "backends/postgres/process_tree.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "platform/os_util.h"

namespace fencecheck::pgproc {
namespace {

using Clock = std::chrono::steady_clock;

struct StatLine {
  int ppid = 0;
  std::uint64_t start_time = 0;
};

// Fields 4 (ppid) and 22 (start time) of /proc/<pid>/stat; the command name before them
// may hold spaces and parentheses, so fields count from the last ')'.
bool read_stat(const std::string& pid, StatLine& out) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int i = 0; fields >> field; ++i) {  // i = 0 is field 3, the state
    if (i == 1) out.ppid = std::stoi(field);
    if (i == 19) {
      out.start_time = std::stoull(field);
      return true;
    }
  }
  return false;
}

bool is_current(const ProcId& p) { return os::process_is(p.pid, p.start_time); }

template <typename Done>
bool wait_all(const std::vector<ProcId>& procs, std::chrono::milliseconds timeout, Done done) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (const ProcId& p : procs) all = all && (!is_current(p) || done(p));
    if (all) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

std::vector<ProcId> descendants(int pid) {
  std::multimap<int, ProcId> children;  // ppid → child
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    StatLine s;
    try {
      if (read_stat(name, s)) children.emplace(s.ppid, ProcId{std::stoi(name), s.start_time});
    } catch (const std::exception&) {
      // A process that vanished mid-read, or a malformed line: not ours to signal.
    }
  }
  std::vector<ProcId> out;
  std::vector<int> frontier{pid};
  while (!frontier.empty()) {
    int parent = frontier.back();
    frontier.pop_back();
    auto [begin, end] = children.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      out.push_back(it->second);
      frontier.push_back(it->second.pid);
    }
  }
  return out;
}

void signal_all(const std::vector<ProcId>& procs, int sig) {
  for (const ProcId& p : procs) {
    if (is_current(p)) ::kill(p.pid, sig);
  }
}

bool wait_all_stopped(const std::vector<ProcId>& procs, std::chrono::milliseconds timeout) {
  return wait_all(procs, timeout, [](const ProcId& p) {
    char state = os::process_state(p.pid);
    return state == 'T' || state == 't' || state == 'Z' || state == 'X' || state == '\0';
  });
}

bool wait_all_gone(const std::vector<ProcId>& procs, std::chrono::milliseconds timeout) {
  return wait_all(procs, timeout, [](const ProcId& p) {
    char state = os::process_state(p.pid);
    return state == 'Z' || state == 'X' || state == '\0';
  });
}

}  // namespace fencecheck::pgproc
