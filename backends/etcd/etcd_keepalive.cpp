#include "backends/etcd/etcd_keepalive.h"

#include <algorithm>
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
  }
}

void EtcdKeepAlive::drop(std::int64_t lease) {
  std::lock_guard<std::mutex> lock(mu_);
  leases_.erase(lease);
}

void EtcdKeepAlive::loop() {
  // A renewal gets TTL/6; one that fails is tried again at once (50 ms later, not to spin
  // while no member answers) on the next member, which the connection has moved on to, as
  // clientv3 does: waiting a whole interval after a member went silent could lose a lease
  // that a live member would have renewed.
  const std::chrono::milliseconds renew_timeout = std::max(std::chrono::milliseconds(50), interval_ / 2);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::vector<std::int64_t> due(leases_.begin(), leases_.end());
    lock.unlock();
    bool failed = false;
    // Never under mu_: a renewal may take its whole timeout.
    for (std::int64_t lease : due) {
      etcdserverpb::LeaseKeepAliveResponse resp;
      EtcdStatus s = connection_.lease_keepalive_once(lease, &resp, renew_timeout);
      failed = failed || !s.ok();
      if (s.ok() && resp.ttl() <= 0) {
        std::lock_guard<std::mutex> relock(mu_);
        leases_.erase(lease);
      }
    }
    lock.lock();
    wake_.wait_for(lock, failed ? std::chrono::milliseconds(50) : interval_, [&] { return stopping_; });
  }
}

}  // namespace fencecheck
