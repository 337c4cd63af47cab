#include "platform/stop_signals.h"

#include <atomic>

#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace fencecheck {
namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

StopSignalWatcher::StopSignalWatcher(std::function<void(int)> on_signal) {
  sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this, set, on_signal = std::move(on_signal)] {
    // A timed wait so that the destructor can end the thread without sending a signal.
    const timespec tick{0, 100 * 1000 * 1000};
    while (!done_.load()) {
      int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig > 0) {
        on_signal(sig);
        return;
      }
    }
  });
}

StopSignalWatcher::~StopSignalWatcher() {
  done_.store(true);
  if (thread_.joinable()) thread_.join();
}

ScopedStopHandler::ScopedStopHandler(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

ScopedStopHandler::~ScopedStopHandler() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

namespace {
std::atomic<int> g_stop_count{0};
void count_stop(int) { ++g_stop_count; }
}  // namespace

ScopedStopCount::ScopedStopCount() : handler_((g_stop_count = 0, count_stop)) {}

int ScopedStopCount::count() const { return g_stop_count.load(); }

}  // namespace fencecheck
