// What /proc says about processes: the one place that parses /proc/<pid>/stat. Every other
// folder (the supervisor, `fencecheck clean`, a backend that walks its server's process
// tree, the tests that look for survivors) asks here.
//
// A process is named by pid *and* start time (field 22): a pid may be reused the moment
// its process is reaped, and only the pair names one process for sure.
//
// Thread-safe: reads /proc only, keeps no state. Never throws: a process that vanishes
// mid-read, or a line that does not parse, reads as "gone" (nullopt, '\0', empty). Nothing
// here blocks except wait_until_group_gone(), which polls for at most its timeout.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fencecheck::os {

// The fields of one /proc/<pid>/stat (or /proc/<pid>/task/<tid>/stat) line that
// fencecheck uses. Field numbers as in proc(5).
struct ProcStat {
  int pid = 0;                   // field 1
  char state = '\0';             // field 3: 'R', 'S', 'D', 'T' / 't' (stopped), 'Z', 'X'
  int ppid = 0;                  // field 4
  int pgrp = 0;                  // field 5
  std::uint64_t start_time = 0;  // field 22: clock ticks since boot
};

// Parses one stat line. The command name (field 2) may hold spaces and ')', so fields are
// counted from the last ')'. nullopt for a line too short or malformed.
std::optional<ProcStat> parse_proc_stat(std::string_view line);

// /proc/<pid>/stat; nullopt when pid does not exist (or vanished mid-read).
std::optional<ProcStat> read_proc_stat(int pid);
// /proc/<pid>/task/<tid>/stat: one thread of pid.
std::optional<ProcStat> read_thread_stat(int pid, int tid);

// Every process /proc lists right now (zombies included), in no particular order.
std::vector<ProcStat> all_processes();
// Every process below root (children, their children, …), parents before children,
// zombies included (check .state). root itself is not in the list.
std::vector<ProcStat> descendants_of(int root);

// True for the states of a thread that can no longer run user code: stopped ('T', 't'),
// zombie, dead, or gone ('\0').
bool is_halted_state(char state);

// Field 22 of /proc/<pid>/stat; nullopt when pid does not exist.
std::optional<std::uint64_t> process_start_time(int pid);
// True when pid exists and, if start_time is given, started at that time.
bool process_is(int pid, std::optional<std::uint64_t> start_time);
// Field 3 of /proc/<pid>/stat; '\0' when gone.
char process_state(int pid);

// The thread ids of pid (from /proc/<pid>/task); empty when pid is gone.
std::vector<int> threads_of(int pid);
// Field 3 of /proc/<pid>/task/<tid>/stat; '\0' when gone.
char thread_state(int pid, int tid);
// True when pid exists and every one of its threads is halted (is_halted_state): a
// SIGSTOP has fully taken effect, and the process can no longer act.
bool process_stopped(int pid);

// The live (not zombie) processes whose process group is pgid.
std::vector<int> group_members(int pgid);
// True when every thread of every live member of the group is halted (an empty group
// counts as stopped).
bool group_stopped(int pgid);
// Polls until group_members(pgid) is empty or timeout passes; true if it emptied.
bool wait_until_group_gone(int pgid, int timeout_ms);

}  // namespace fencecheck::os
