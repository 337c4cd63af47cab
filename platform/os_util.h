// Small OS helpers shared by the runtime, the supervisor and `fencecheck clean`. Internal
// to harness/runtime: other folders use runtime.h, supervisor.h and run_state.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fencecheck::os {

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot): together with the
// pid it names one process even after the pid is reused. nullopt when pid does not exist.
std::optional<std::uint64_t> process_start_time(int pid);

// True when pid exists and, if start_time is given, started at that time.
bool process_is(int pid, std::optional<std::uint64_t> start_time);

// Field 3 of /proc/<pid>/stat: 'R', 'S', 'T' (stopped), 'Z'… ; '\0' when gone.
char process_state(int pid);

// The thread ids of pid (from /proc/<pid>/task); empty when pid is gone.
std::vector<int> threads_of(int pid);
// Field 3 of /proc/<pid>/task/<tid>/stat; '\0' when gone.
char thread_state(int pid, int tid);

// The live (not zombie) processes whose process group is pgid.
std::vector<int> group_members(int pgid);

// Polls until group_members(pgid) is empty or timeout passes; true if it emptied.
bool wait_until_group_gone(int pgid, int timeout_ms);

struct CommandResult {
  int status = -1;     // exit code, or 128 + signal
  std::string output;  // stdout and stderr interleaved
};

// Runs argv (argv[0] found by find_executable) with `input` on stdin and waits, feeding
// stdin and draining the output together, so any amount of either is fine. Throws
// HarnessError when it cannot be started. Blocks until the command exits and closes its
// output.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& input = "");

// Like run_command, but throws HarnessError quoting the command and its output when the
// exit code is not 0. `what` says what was being done, for the message.
std::string check_command(const std::vector<std::string>& argv, const std::string& what,
                          const std::string& input = "");

// Where programs are looked up, for validation and for spawn alike: $PATH, then the
// directories Debian installs daemons and admin tools in that a normal PATH lacks
// (/usr/local/sbin, /usr/sbin, /sbin, /usr/share/zookeeper/bin, /usr/lib/postgresql/*/bin,
// newest version first).
std::vector<std::string> program_search_path();
// The full path of an executable: name itself when it contains a '/', else the first
// match on program_search_path(). nullopt when absent.
std::optional<std::string> find_executable(const std::string& name);

std::string strerror_string(int err);

// Writes all of text to fd (retrying short writes and EINTR), fsyncs it and closes it —
// closing it in every case. Throws HarnessError "cannot <write|fsync|close> <name>: why":
// a file whose data may not have reached the disk must never be taken for written.
void write_sync_close(int fd, const std::string& text, const std::string& name);

// "install the Debian package iproute2, e.g. with scripts/setup.sh" for a missing program.
std::string install_hint(const std::string& program);

}  // namespace fencecheck::os
