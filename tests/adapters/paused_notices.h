// PausedNotices: the kPaused notices an AdapterLockClient tells (pause-after-send), for the
// adapter tests. Test-only; thread-safe (the client's reader thread tells, the test reads).
// It owns the client's notice listener while it lives, and must go before the client or be
// destroyed while no notice can come (it unsets the listener, but a notice being told then
// would still reach it).
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/adapter_client.h"

namespace fencecheck {

// Each notice with whether it was told while an acquire made through acquire() was in flight.
class PausedNotices {
 public:
  struct Told {
    LibraryNotice notice;
    bool before_return = false;
  };
  explicit PausedNotices(AdapterLockClient& c) : c_(c) {
    c_.set_notice_listener([this](const LibraryNotice& n) {
      if (n.kind != LibraryNotice::Kind::kPaused) return;
      std::lock_guard lock(mu_);
      told_.push_back({n, in_acquire_});
    });
  }
  ~PausedNotices() { c_.set_notice_listener(nullptr); }
  PausedNotices(const PausedNotices&) = delete;
  PausedNotices& operator=(const PausedNotices&) = delete;
  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) {
    set_in_acquire(true);
    LockResult r = c_.acquire(key, ttl);
    set_in_acquire(false);
    return r;
  }
  std::vector<Told> all() {
    std::lock_guard lock(mu_);
    return told_;
  }

 private:
  void set_in_acquire(bool on) {
    std::lock_guard lock(mu_);
    in_acquire_ = on;
  }
  AdapterLockClient& c_;
  std::mutex mu_;
  std::vector<Told> told_;
  bool in_acquire_ = false;
};

}  // namespace fencecheck
