// Writeback: fclazydisk's imitation of a kernel's dirty-page flusher (--writeback-ms N,
// fclazydisk.cpp). A thread wakes every period(N) and has the FileTable write back each
// overlay that has been non-empty for N ms or more (FileTable::write_back: pwrite to the
// backing file, no fsync), so that a crash loses only the writes of roughly the last
// N + period(N) ms. The kernel's defaults are N = 30 s (vm.dirty_expire_centisecs) and a
// 5 s period (vm.dirty_writeback_centisecs); here the period is short to keep the bound
// tight. Thread-safe: start and stop from one thread (fclazydisk's init and destroy);
// the thread blocks every signal, so SIGTERM and friends reach the FUSE loop's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "nemesis/disk/file_table.h"

namespace fencecheck::lazydisk {

class Writeback {
 public:
  Writeback() = default;
  Writeback(const Writeback&) = delete;
  Writeback& operator=(const Writeback&) = delete;
  ~Writeback() { stop(); }

  // How often the thread checks for max_age: max_age / 4, within [1 ms, 500 ms].
  static std::chrono::milliseconds period(std::chrono::milliseconds max_age);

  // Starts the thread over table (which outlives it); nothing when max_age <= 0 or when
  // it runs already.
  void start(FileTable* table, std::chrono::milliseconds max_age);
  // Ends the thread (after the write-back it may be doing); nothing when not running.
  void stop();

 private:
  void run(FileTable* table, std::chrono::milliseconds max_age);

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace fencecheck::lazydisk
