#include "backends/etcd/etcd_keepalive.h"

#include <vector>

namespace fencecheck {

EtcdKeepAlive::EtcdKeepAlive(EtcdConnection& connection, std::chrono::seconds ttl)
    : connection_(connection),
      interval_(std::max(std::chrono::milliseconds(100), std::chrono::milliseconds(ttl) / 3)),
      thread_([this] { loop(); }) {}

EtcdKeepAlive::~EtcdKeepAlive() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void EtcdKeepAlive::add(std::int64_t lease) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    leases_.insert(lease);
    expired_.erase(lease);
  }
  wake_.notify_all();
}

void EtcdKeepAlive::drop(std::int64_t lease) {
  std::lock_guard<std::mutex> lock(mu_);
  leases_.erase(lease);
  expired_.erase(lease);
}

bool EtcdKeepAlive::expired(std::int64_t lease) const {
  std::lock_guard<std::mutex> lock(mu_);
  return expired_.count(lease) > 0;
}

void EtcdKeepAlive::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::vector<std::int64_t> due(leases_.begin(), leases_.end());
    lock.unlock();
    // Never under mu_: a renewal may take its whole timeout.
    for (std::int64_t lease : due) {
      etcdserverpb::LeaseKeepAliveResponse resp;
      EtcdStatus s = connection_.lease_keepalive_once(lease, &resp, interval_);
      if (s.ok() && resp.ttl() <= 0) {
        std::lock_guard<std::mutex> relock(mu_);
        if (leases_.erase(lease) > 0) expired_.insert(lease);
      }
    }
    lock.lock();
    wake_.wait_for(lock, interval_, [&] { return stopping_; });
  }
}

}  // namespace fencecheck
