#include "platform/proc_stat.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace fencecheck::os {

namespace {

// The numeric names in dir (pids in /proc, tids in /proc/<pid>/task).
std::vector<int> numeric_entries(const std::string& dir) {
  std::vector<int> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    int id = 0;
    auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), id);
    if (err == std::errc() && end == name.data() + name.size() && id > 0) ids.push_back(id);
  }
  return ids;
}

std::optional<ProcStat> read_stat_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return parse_proc_stat(line);
}

template <typename Number>
bool parse_number(std::string_view text, Number& out) {
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), out);
  return err == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view line) {
  const auto open = line.find(" (");
  const auto close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcStat s;
  if (!parse_number(line.substr(0, open), s.pid)) return std::nullopt;
  // Fields after the name, numbered from 3 (the state).
  std::vector<std::string_view> fields;
  for (std::size_t at = close + 1; at < line.size();) {
    auto start = line.find_first_not_of(' ', at);
    if (start == std::string_view::npos) break;
    auto stop = line.find(' ', start);
    if (stop == std::string_view::npos) stop = line.size();
    fields.push_back(line.substr(start, stop - start));
    if (fields.size() == 20) break;  // field 22 is the last one we read
    at = stop;
  }
  if (fields.size() < 20 || fields[0].size() != 1) return std::nullopt;
  s.state = fields[0][0];
  if (!parse_number(fields[1], s.ppid) || !parse_number(fields[2], s.pgrp) ||
      !parse_number(fields[19], s.start_time)) {
    return std::nullopt;
  }
  return s;
}

std::optional<ProcStat> read_proc_stat(int pid) {
  if (pid <= 0) return std::nullopt;
  return read_stat_file("/proc/" + std::to_string(pid) + "/stat");
}

std::optional<ProcStat> read_thread_stat(int pid, int tid) {
  if (pid <= 0 || tid <= 0) return std::nullopt;
  return read_stat_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
}

std::vector<ProcStat> all_processes() {
  std::vector<ProcStat> all;
  for (int pid : numeric_entries("/proc")) {
    if (auto s = read_proc_stat(pid)) all.push_back(*s);
  }
  return all;
}

std::vector<ProcStat> descendants_of(int root) {
  std::multimap<int, ProcStat> children;  // ppid → child
  for (const ProcStat& s : all_processes()) children.emplace(s.ppid, s);
  std::vector<ProcStat> out;
  std::vector<int> frontier{root};
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

bool is_halted_state(char state) {
  return state == 'T' || state == 't' || state == 'Z' || state == 'X' || state == '\0';
}

std::optional<std::uint64_t> process_start_time(int pid) {
  auto s = read_proc_stat(pid);
  return s ? std::optional(s->start_time) : std::nullopt;
}

bool process_is(int pid, std::optional<std::uint64_t> start_time) {
  auto actual = process_start_time(pid);
  return actual && (!start_time || *actual == *start_time);
}

char process_state(int pid) {
  auto s = read_proc_stat(pid);
  return s ? s->state : '\0';
}

std::vector<int> threads_of(int pid) {
  return pid > 0 ? numeric_entries("/proc/" + std::to_string(pid) + "/task") : std::vector<int>{};
}

char thread_state(int pid, int tid) {
  auto s = read_thread_stat(pid, tid);
  return s ? s->state : '\0';
}

bool process_stopped(int pid) {
  if (!read_proc_stat(pid)) return false;
  for (int tid : threads_of(pid)) {
    if (!is_halted_state(thread_state(pid, tid))) return false;
  }
  return true;
}

std::vector<int> group_members(int pgid) {
  std::vector<int> members;
  for (const ProcStat& s : all_processes()) {
    if (s.pgrp == pgid && s.state != 'Z') members.push_back(s.pid);
  }
  return members;
}

bool group_stopped(int pgid) {
  for (int pid : group_members(pgid)) {
    // Polled every millisecond: the listing read each stat already, so only the threads
    // are looked at. A member that exited since has no threads left: halted too.
    for (int tid : threads_of(pid)) {
      if (!is_halted_state(thread_state(pid, tid))) return false;
    }
  }
  return true;
}

bool wait_until_group_gone(int pgid, int timeout_ms) {
  for (int waited = 0;; waited += 10) {
    if (group_members(pgid).empty()) return true;
    if (waited >= timeout_ms) return false;
    ::usleep(10 * 1000);
  }
}

}  // namespace fencecheck::os
