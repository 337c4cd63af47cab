// AdapterProcess: one running adapter program (adapters/PROTOCOL.md), a child of this
// process, and the line-oriented pipe to it.
//
// The child stays in this process's group, so a pause, a kill or a clock fault of the
// worker reaches the adapter too (one process group); its stdin and stdout are one end of
// a socket pair, its stderr is appended to the log file. Every line the adapter writes on
// stdout is handed, without its newline, to on_line, and the end of its output to on_end
// with how the process ended ("exited with status 3", "was killed by signal 9"); both run
// on the reader thread, one call at a time, never after the destructor returned.
//
// Thread-safe: send() may be called from any thread. Nothing blocks for long: send() waits
// at most until its deadline, the destructor at most ~1 s (SIGKILL, then reaping).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "platform/unique_fd.h"

namespace fencecheck {

class AdapterProcess {
 public:
  struct Options {
    std::filesystem::path program;  // the adapter's `run`
    std::filesystem::path log;      // its stderr, appended
    std::function<void(const std::string& line)> on_line;
    std::function<void(const std::string& how_it_ended)> on_end;
  };
  // Starts the program in its own folder. Throws HarnessError when it cannot be started.
  explicit AdapterProcess(Options options);
  // Closes the adapter's stdin, kills it (SIGKILL) and reaps it; on_end is not called.
  ~AdapterProcess();
  AdapterProcess(const AdapterProcess&) = delete;
  AdapterProcess& operator=(const AdapterProcess&) = delete;

  // Writes text and a newline. False when the adapter does not take it by the deadline
  // (it stopped reading or is gone).
  bool send(const std::string& text, std::chrono::steady_clock::time_point deadline);
  pid_t pid() const { return pid_; }

 private:
  void read_lines();
  std::string reap(std::chrono::milliseconds wait);

  Options options_;
  pid_t pid_ = -1;
  UniqueFd socket_;       // our end of the adapter's stdin/stdout
  PipeEnds wake_;         // the destructor wakes the reader through it
  std::mutex send_mu_;    // one line at a time
  std::mutex reap_mu_;
  bool reaped_ = false;
  std::thread reader_;
};

}  // namespace fencecheck
