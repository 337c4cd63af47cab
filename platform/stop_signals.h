// Clean shutdown of a service process (`fencecheck resource`, `fencecheck worker`) on
// SIGTERM or SIGINT.
//
// The constructor blocks both signals in the calling thread, so every thread created
// after it (gRPC's included) inherits the mask and the signals are only ever taken by the
// watcher thread, which calls on_signal once. Construct it on the main thread before
// starting any server. The destructor stops the watcher thread; it does not unblock.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace fencecheck {

// Installs `handler` for SIGINT and SIGTERM for its lifetime and restores the previous
// handlers after; for a controller that counts interrupts and polls the count. The handler
// must be async-signal-safe. Not thread-safe: one at a time, on the main thread.
class ScopedStopHandler {
 public:
  explicit ScopedStopHandler(void (*handler)(int));
  ~ScopedStopHandler();
  ScopedStopHandler(const ScopedStopHandler&) = delete;
  ScopedStopHandler& operator=(const ScopedStopHandler&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// Counts SIGINT and SIGTERM for its lifetime (a ScopedStopHandler whose handler counts),
// for a controller that checks between two steps whether to stop. The count starts at 0
// with each instance. One at a time, on the main thread.
class ScopedStopCount {
 public:
  ScopedStopCount();
  int count() const;

 private:
  ScopedStopHandler handler_;
};

class StopSignalWatcher {
 public:
  explicit StopSignalWatcher(std::function<void(int signal)> on_signal);
  ~StopSignalWatcher();
  StopSignalWatcher(const StopSignalWatcher&) = delete;
  StopSignalWatcher& operator=(const StopSignalWatcher&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace fencecheck
