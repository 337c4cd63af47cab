// EtcdKeepAlive: the thread that keeps a client's leases alive, as etcd's clientv3 does for
// a session: every lease it was given is renewed every TTL/3 until it is dropped, or until
// etcd says the lease is gone (a renewal answered TTL 0), after which it is forgotten. A
// renewal that gets no answer (TTL/6) is tried again at once on the next member.
//
// A SIGSTOP of the client stops this thread with the rest of the process: that is the
// fault under test (the lease runs out while the client is frozen).
//
// Thread-safe. add() and drop() return at once; the destructor waits for the thread, at
// most one renewal's timeout per lease. The connection must outlive this object.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>

#include "backends/etcd/etcd_connection.h"

namespace fencecheck {

class EtcdKeepAlive {
 public:
  EtcdKeepAlive(EtcdConnection& connection, std::chrono::seconds ttl);
  ~EtcdKeepAlive();
  EtcdKeepAlive(const EtcdKeepAlive&) = delete;
  EtcdKeepAlive& operator=(const EtcdKeepAlive&) = delete;

  void add(std::int64_t lease);
  void drop(std::int64_t lease);

 private:
  void loop();

  EtcdConnection& connection_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::set<std::int64_t> leases_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace fencecheck
