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

void EtcdKeepAlive::add(std::int64_t lease, Renewal granted) {
  std::lock_guard<std::mutex> lock(mu_);
  leases_[lease] = Lease{granted, true, "", ""};
}

std::optional<EtcdKeepAlive::Renewal> EtcdKeepAlive::hold(std::int64_t lease, const std::string& key,
                                                          const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = leases_.find(lease);
  if (it == leases_.end()) return std::nullopt;
  it->second.key = key;
  it->second.owner = owner;
  return it->second.last;
}

void EtcdKeepAlive::drop(std::int64_t lease) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    leases_.erase(lease);
  }
  // A renewal that found the lease before the erase may be telling it now: wait for it.
  std::lock_guard<std::mutex> told(tell_mu_);
}

void EtcdKeepAlive::set_listener(LockClient::NoticeListener listener) {
  std::lock_guard<std::mutex> told(tell_mu_);
  listener_ = std::move(listener);
}

void EtcdKeepAlive::renewed(std::int64_t lease, const Renewal& r) {
  std::lock_guard<std::mutex> told(tell_mu_);
  LibraryNotice n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = leases_.find(lease);
    if (it == leases_.end()) return;  // dropped meanwhile
    if (r.ttl.count() <= 0) {         // gone: no renewal, and none tried again
      it->second.renewing = false;
      return;
    }
    it->second.last = r;
    if (it->second.owner.empty() || !listener_) return;
    n.kind = LibraryNotice::Kind::kRenewed;
    n.key = it->second.key;
    n.owner = it->second.owner;
    n.valid = r.valid_from(Clock::now());
  }
  // Not under mu_, which the acquire and release take; tell_mu_ only makes drop() wait
  // for this call, and the listener does not block.
  listener_(n);
}

void EtcdKeepAlive::loop() {
  // A renewal gets TTL/6; one that fails is tried again at once (50 ms later, not to spin
  // while no member answers) on the next member, which the connection has moved on to, as
  // clientv3 does: waiting a whole interval after a member went silent could lose a lease
  // that a live member would have renewed.
  const std::chrono::milliseconds renew_timeout = std::max(std::chrono::milliseconds(50), interval_ / 2);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::vector<std::int64_t> due;
    for (const auto& [lease, l] : leases_) {
      if (l.renewing) due.push_back(lease);
    }
    lock.unlock();
    bool failed = false;
    // Never under mu_: a renewal may take its whole timeout.
    for (std::int64_t lease : due) {
      etcdserverpb::LeaseKeepAliveResponse resp;
      const Clock::time_point sent = Clock::now();
      EtcdStatus s = connection_.lease_keepalive_once(lease, &resp, renew_timeout);
      failed = failed || !s.ok();
      if (s.ok()) renewed(lease, {sent, std::chrono::seconds(resp.ttl())});
    }
    lock.lock();
    wake_.wait_for(lock, failed ? std::chrono::milliseconds(50) : interval_, [&] { return stopping_; });
  }
}

}  // namespace fencecheck
