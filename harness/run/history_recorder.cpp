#include "harness/run/history_recorder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>

#include "platform/json_text.h"
#include "platform/runtime.h"

namespace fencecheck {

HistoryRecorder::HistoryRecorder(const std::filesystem::path& path, std::int64_t t0_ns)
    : path_(path), t0_(t0_ns) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw HarnessError("cannot create " + path.string() + ": " + std::strerror(errno));
  }
  flusher_ = std::thread([this] { flush_loop(); });
}

HistoryRecorder::~HistoryRecorder() {
  const std::string error = finish();
  std::lock_guard lock(mu_);
  if (!error.empty() && !error_heard_) {  // nobody called close(): the run never learnt of it
    std::cerr << "fencecheck: error: " << error << "; the history lacks its last lines\n";
  }
}

void HistoryRecorder::close() {
  if (finish().empty()) return;
  std::lock_guard lock(mu_);
  throw_write_error_locked();
}

std::string HistoryRecorder::finish() noexcept {
  std::lock_guard once(close_mu_);
  if (!closed_) {
    closed_ = true;
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    wake_.notify_all();
    flusher_.join();
    write_pending();
    std::lock_guard writing(write_mu_);
    // close(2) may report a failed write-back (NFS, a full disk); EINTR closed it all the same.
    if (::close(fd_) != 0 && errno != EINTR) {
      std::lock_guard lock(mu_);
      if (write_error_.empty()) write_error_ = "cannot close " + path_.string() + ": " + std::strerror(errno);
    }
    fd_ = -1;
  }
  std::lock_guard lock(mu_);
  return write_error_;
}

void HistoryRecorder::flush_loop() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, kFlushEvery, [this] { return closing_; });
      if (closing_) return;  // finish() writes the rest
    }
    if (!write_pending()) return;  // write_error_ holds it for the next record(), flush() or close()
  }
}

void HistoryRecorder::flush() {
  if (write_pending()) return;
  std::lock_guard lock(mu_);
  throw_write_error_locked();
}

void HistoryRecorder::throw_write_error_locked() {
  error_heard_ = true;
  throw HarnessError(write_error_);
}

bool HistoryRecorder::write_pending() noexcept {
  std::lock_guard writing(write_mu_);
  std::string batch;
  {
    std::lock_guard lock(mu_);
    if (!write_error_.empty()) return false;
    batch.swap(pending_);
  }
  for (std::size_t done = 0; done < batch.size();) {
    const ssize_t n = ::write(fd_, batch.data() + done, batch.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::lock_guard lock(mu_);
      write_error_ = "cannot write " + path_.string() + ": " + std::strerror(errno);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::int64_t HistoryRecorder::monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void HistoryRecorder::record(std::int64_t process, OpType type, OpFn f, const std::string& key,
                             const nlohmann::json& value, const std::string& node,
                             const std::string& error, bool not_sent) {
  nlohmann::ordered_json body;
  body["process"] = process;
  body["type"] = to_string(type);
  body["f"] = to_string(f);
  body["key"] = key;
  body["value"] = value;
  body["node"] = node;
  if (!error.empty()) body["error"] = error;
  const std::string text = dump_json(body);
  std::lock_guard lock(mu_);
  const Nanos time = write_locked(text);
  count_locked(type, f, time, not_sent);
}

void HistoryRecorder::count_locked(OpType type, OpFn f, Nanos time, bool not_sent) {
  if (type == OpType::kInvoke) {
    if (stats_.first_invoke < 0) stats_.first_invoke = time;
    return;
  }
  HistoryStats::Tally& by_f = stats_.by_f[std::string(to_string(f))];
  switch (type) {
    case OpType::kOk: {
      ++ok_, ++by_f.ok, ++stats_.total.ok;
      Nanos gap = time - (stats_.last_ok >= 0 ? stats_.last_ok : stats_.first_invoke);
      if (gap > stats_.longest_ok_gap) {
        stats_.longest_ok_gap = gap;
        stats_.longest_ok_gap_end = time;
      }
      stats_.last_ok = time;
      break;
    }
    case OpType::kFail:
      ++fail_, ++by_f.fail, ++stats_.total.fail;
      stats_.not_sent += not_sent;
      break;
    case OpType::kInfo: ++info_, ++by_f.info, ++stats_.total.info; break;
    case OpType::kInvoke:
    case OpType::kNotice: break;
  }
}

HistoryStats HistoryRecorder::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void HistoryRecorder::record_nemesis(const std::string& f, const nlohmann::json& value) {
  nlohmann::ordered_json body;
  body["process"] = "nemesis";
  body["type"] = "info";
  body["f"] = f;
  body["value"] = value;
  const std::string text = dump_json(body);
  std::lock_guard lock(mu_);
  write_locked(text);
}

Nanos HistoryRecorder::write_locked(const std::string& body) {
  if (!write_error_.empty()) throw_write_error_locked();
  if (closing_) throw HarnessError("cannot record to " + path_.string() + ": it is closed");
  const Nanos time = monotonic_ns() - t0_;
  pending_ += "{\"index\":";
  pending_ += std::to_string(index_.load());
  pending_ += ",\"time\":";
  pending_ += std::to_string(time);
  pending_ += ',';
  pending_.append(body, 1);  // the body's fields, after its '{'; dump_json replaced any invalid UTF-8
  pending_ += '\n';
  ++index_;
  return time;
}

}  // namespace fencecheck
