// HistoryRecorder: writes history.jsonl as the run happens. It stamps every event with the
// controller's monotonic clock (ns since t0) and its index under one lock, so file order,
// index order and time order agree. A recorded line is in the file within kFlushEvery (a
// thread of the recorder writes what was recorded since its last write, in one write(2)),
// so a killed controller leaves a prefix of the history lacking at most that last stretch;
// a write per line cost the controller a tenth of its time per op. Thread-safe.
// Throws HarnessError when the file cannot be created or written (a failed write is
// thrown by the next record(), flush() or close()). The run calls close() once the last
// line is recorded and before the history is judged: it is the only call that tells of a
// failure to write the final lines. The destructor never throws; one that meets a write
// error nobody was told of (no close(), or close() not reached) writes it to stderr.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "checkers/history.h"

namespace fencecheck {

// Counts of completed client ops, and the longest stretch without an ok one.
struct HistoryStats {
  struct Tally {
    std::uint64_t ok = 0, fail = 0, info = 0;
  };
  std::map<std::string, Tally> by_f;  // "acquire" → counts
  Tally total;
  std::uint64_t not_sent = 0;  // fails because the service could not even be reached
  Nanos first_invoke = -1;     // time of the first client invoke; -1 before it
  Nanos last_ok = -1;          // time of the last ok completion; -1 before it
  Nanos longest_ok_gap = 0;    // longest time from the first invoke or an ok to the next ok
  Nanos longest_ok_gap_end = 0;  // when that gap ended
};

class HistoryRecorder {
 public:
  // t0_ns: CLOCK_MONOTONIC at the start of the test.
  HistoryRecorder(const std::filesystem::path& path, std::int64_t t0_ns);
  ~HistoryRecorder();
  HistoryRecorder(const HistoryRecorder&) = delete;
  HistoryRecorder& operator=(const HistoryRecorder&) = delete;

  // not_sent: a fail because nothing reached the service (counted in HistoryStats).
  void record(std::int64_t process, OpType type, OpFn f, const std::string& key,
              const nlohmann::json& value, const std::string& node, const std::string& error = "",
              bool not_sent = false);
  void record_nemesis(const std::string& f, const nlohmann::json& value);

  // A consistent snapshot of the counts.
  HistoryStats stats() const;
  // Nanoseconds since t0 now, on the recorder's clock.
  Nanos now() const { return monotonic_ns() - t0_; }

  std::uint64_t ok() const { return ok_; }
  std::uint64_t failed() const { return fail_; }
  std::uint64_t unknown() const { return info_; }
  std::uint64_t events() const { return index_; }

  // Writes every line recorded so far before returning (blocks on the disk only). Throws
  // HarnessError if any write failed.
  void flush();
  static constexpr std::chrono::milliseconds kFlushEvery{5};
  // Writes every line recorded so far and closes the file; a record() after it throws.
  // Throws HarnessError naming the file if any line could not be written (now or before)
  // or the file cannot be closed — the history then lacks lines and must not be judged as
  // whole. Blocks on the disk only; a second call does nothing more (and throws the same).
  void close();

  static std::int64_t monotonic_ns();

 private:
  // Stamps the next line with its index and time and appends it, body being the JSON
  // object of its other fields (made before the lock is taken: 20 client threads share
  // it). Returns the line's time.
  Nanos write_locked(const std::string& body);
  void flush_loop();
  // close()'s work, done once: stops the flusher, writes the rest, closes fd_. Returns the
  // first error ("" if none) and never throws.
  std::string finish() noexcept;
  // Writes what is pending in one batch; false (write_error_ says why) if any write failed.
  bool write_pending() noexcept;
  // Throws write_error_ (under mu_), marking it heard.
  [[noreturn]] void throw_write_error_locked();
  std::filesystem::path path_;
  std::int64_t t0_;
  void count_locked(OpType type, OpFn f, Nanos time, bool not_sent);
  mutable std::mutex mu_;
  std::string pending_;      // recorded, not yet written (under mu_)
  std::string write_error_;  // the first failed write or close (under mu_)
  bool error_heard_ = false; // write_error_ was thrown to a caller (under mu_)
  bool closing_ = false;     // under mu_: no more records, the flusher stops
  std::mutex close_mu_;      // one finish() at a time
  bool closed_ = false;      // under close_mu_
  std::condition_variable wake_;
  std::mutex write_mu_;      // one writer at a time, so that batches reach the file in order
  int fd_ = -1;
  HistoryStats stats_;
  std::atomic<std::uint64_t> index_{0}, ok_{0}, fail_{0}, info_{0};
  std::thread flusher_;      // last: started once everything above exists
};

}  // namespace fencecheck
