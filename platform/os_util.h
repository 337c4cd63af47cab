// Small OS helpers of the ground floor: run a command and collect its output, find a
// program, write a file durably, say what to install. They name no backend and no tool:
// callers pass the directories and Debian packages (a backend's BackendInfo::binaries).
// Process inspection lives in platform/proc_stat.h (included here for older callers).
//
// Thread-safe: no shared state. Errors throw HarnessError saying what failed. Only
// run_command and check_command block: until the command exits (or run_command's timeout).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "platform/deadline.h"
#include "platform/proc_stat.h"

namespace fencecheck::os {

struct CommandResult {
  int status = -1;     // exit code, or 128 + signal
  std::string output;  // stdout and stderr interleaved
  bool timed_out = false;  // killed at run_command's timeout or deadline (status is then 128 + 9)
  bool cancelled = false;  // … because the deadline's cancel check said so
};

// Runs argv (argv[0] found by find_executable) with `input` on stdin and waits, feeding
// stdin and draining the output together, so any amount of either is fine. Throws
// HarnessError when it cannot be started. Blocks until the command exits and closes its
// output, or — when timeout is given — at most that long: then it is SIGKILLed and reaped.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& input = "",
                          std::optional<std::chrono::milliseconds> timeout = std::nullopt);
// The same, bounded by a caller's deadline: killed once it passes or its cancel check says so
// (checked every 50 ms).
CommandResult run_command(const std::vector<std::string>& argv, const std::string& input, const Deadline& deadline);

// Like run_command, but throws HarnessError quoting the command and its output when the
// exit code is not 0. `what` says what was being done, for the message.
std::string check_command(const std::vector<std::string>& argv, const std::string& what,
                          const std::string& input = "");

// Where programs are looked up, for validation and for spawn alike: $PATH, then the
// directories that hold daemons and admin tools but that a normal user's PATH lacks
// (/usr/local/sbin, /usr/sbin, /sbin), then extra_dirs in order. An extra directory may
// hold one '*' standing for a whole path component, e.g. "/usr/lib/<tool>/*/bin": it
// expands to every match, newest version first (strverscmp).
std::vector<std::string> program_search_path(const std::vector<std::string>& extra_dirs = {});
// The full path of an executable: name itself when it contains a '/', else the first
// match on program_search_path(extra_dirs). nullopt when absent.
std::optional<std::string> find_executable(const std::string& name,
                                           const std::vector<std::string>& extra_dirs = {});

std::string strerror_string(int err);

// The last `lines` lines of the file at path (of its last 64 KiB), for messages that quote
// a log: "(no log at PATH)" when it cannot be read, "(log is empty)" when it is empty.
std::string file_tail(const std::string& path, std::size_t lines = 20);

// Writes all of text to fd (retrying short writes and EINTR), fsyncs it (unless sync is
// false) and closes it — closing it in every case. Throws HarnessError "cannot
// <write|fsync|close> <name>: why": a file whose data may not have reached the disk must
// never be taken for written.
void write_sync_close(int fd, const std::string& text, const std::string& name, bool sync = true);

// "install the Debian package iproute2, e.g. with scripts/setup.sh" for a missing program;
// with an empty package, "install the Debian package that provides it, …".
std::string install_hint(const std::string& debian_package);

}  // namespace fencecheck::os
