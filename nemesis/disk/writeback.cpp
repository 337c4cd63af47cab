// Writeback: see writeback.h.
#include "nemesis/disk/writeback.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace fencecheck::lazydisk {

std::chrono::milliseconds Writeback::period(std::chrono::milliseconds max_age) {
  using std::chrono::milliseconds;
  return std::clamp(max_age / 4, milliseconds(1), milliseconds(500));
}

void Writeback::start(FileTable* table, std::chrono::milliseconds max_age) {
  if (max_age.count() <= 0 || thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  // The new thread inherits a mask of every signal.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread(&Writeback::run, this, table, max_age);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void Writeback::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Writeback::run(FileTable* table, std::chrono::milliseconds max_age) {
  const auto every = period(max_age);
  bool reported = false;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, every, [this] { return stopping_; })) return;
    }
    int error = 0;
    table->write_back(Clock::now(), max_age, &error);
    if (error != 0 && !reported) {  // once: it would repeat every period
      std::fprintf(stderr, "fclazydisk: write-back failed (kept in memory, retried): %s\n", std::strerror(-error));
      reported = true;
    }
  }
}

}  // namespace fencecheck::lazydisk
