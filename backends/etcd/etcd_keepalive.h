// EtcdKeepAlive: the thread that keeps a client's leases alive, as etcd's clientv3 does for
// a session: every lease it was given is renewed every TTL/3 until it is dropped, or until
// etcd says the lease is gone (a renewal answered TTL 0), after which it is no longer
// renewed. A renewal that gets no answer (TTL/6) is tried again at once on the next member.
//
// It also remembers, per lease, the latest renewal etcd answered (or the grant itself): when
// its request was sent and the TTL the answer gave, i.e. how long the client was promised
// (docs/history.md, valid_ms). Once a lease is held by a grant (hold()), each renewal is told
// to the notice listener as kRenewed, until the lease is dropped.
//
// A SIGSTOP of the client stops this thread with the rest of the process: that is the
// fault under test (the lease runs out while the client is frozen).
//
// Thread-safe. add(), hold() and set_listener() return at once; drop() waits at most for a
// notice being told (the listener must not block: LockClient's contract); the destructor
// waits for the thread, at most one renewal's timeout per lease. The connection must
// outlive this object.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backends/etcd/etcd_connection.h"
#include "backends/lock_client.h"

namespace fencecheck {

class EtcdKeepAlive {
 public:
  using Clock = std::chrono::steady_clock;
  // A lease grant or renewal that etcd answered: when its request was sent, and the TTL
  // the answer gave.
  struct Renewal {
    Clock::time_point sent;
    std::chrono::seconds ttl{0};
    // The validity it promised counted from `from`: sent + ttl − from, rounded down (never
    // later than the client's own end). Negative once the promise is over.
    std::chrono::milliseconds valid_from(Clock::time_point from) const {
      return std::chrono::floor<std::chrono::milliseconds>(sent + ttl - from);
    }
  };

  EtcdKeepAlive(EtcdConnection& connection, std::chrono::seconds ttl);
  ~EtcdKeepAlive();
  EtcdKeepAlive(const EtcdKeepAlive&) = delete;
  EtcdKeepAlive& operator=(const EtcdKeepAlive&) = delete;

  // Keeps lease alive from now on; `granted` is its LeaseGrant.
  void add(std::int64_t lease, Renewal granted);
  // The lease now backs a grant of key, told as owner: every later renewal is a kRenewed
  // notice. Returns the lease's latest renewal (the grant when none yet), which is what
  // the grant is promised; nullopt for a lease not added (or dropped).
  std::optional<Renewal> hold(std::int64_t lease, const std::string& key, const std::string& owner);
  // Stops renewing lease and forgets it; once it returns, no notice of lease is told.
  void drop(std::int64_t lease);
  void set_listener(LockClient::NoticeListener listener);

 private:
  struct Lease {
    Renewal last;
    bool renewing = true;    // false once etcd said the lease is gone
    std::string key, owner;  // set by hold(): the grant it backs
  };
  void loop();
  // A renewal of lease came back: remember it, and tell it when the lease is held.
  void renewed(std::int64_t lease, const Renewal& r);

  EtcdConnection& connection_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::int64_t, Lease> leases_;
  bool stopping_ = false;
  // Held while a notice is told (taken before mu_, never inside it): drop() passes
  // through it, so that a notice already decided is told before drop() returns.
  std::mutex tell_mu_;
  LockClient::NoticeListener listener_;  // under tell_mu_
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace fencecheck
