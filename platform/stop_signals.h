// Clean shutdown of a service process (`fencecheck resource`, `fencecheck worker`) on
// SIGTERM or SIGINT.
//
// The constructor blocks both signals in the calling thread, so every thread created
// after it (gRPC's included) inherits the mask and the signals are only ever taken by the
// watcher thread, which calls on_signal once. Construct it on the main thread before
// starting any server. The destructor stops the watcher thread; it does not unblock.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace fencecheck {

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
