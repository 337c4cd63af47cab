// The lock client of the `etcd` backend: a lease per grant, kept alive while it is
// wanted, and one of two ways to lock with it (option `lock`):
//
//   rpc    the v3lock `Lock` RPC (Jepsen's etcd lock test): the server puts
//          <name>/<lease in hex> under the lease and answers once every key created
//          before it under <name>/ is gone.
//   mutex  the clientv3/concurrency Mutex recipe of etcd 3.4, in C++: a Txn puts the same
//          key if it does not exist (and reads the first holder); unless it is the first,
//          watch the last key created before it until it is deleted, again until none
//          is left.
//
// Both are etcd 3.4 as Debian ships it: neither checks, once the wait is over, that the
// client's own key still exists (etcd#11456, fixed only on etcd's main branch). A client
// frozen while it waits loses its lease and still hears "locked". The client does not
// hide that: it reports the grant as etcd gave it, and records what it found right after
// (Grant::detail: the lease's remaining TTL, -1 when gone, whether the key exists, and
// when it does not, whether it existed at the grant's revision — an MVCC read that tells
// etcd#11456 from a lease that expired after the grant, while the client was frozen).
//
// The token is the lock key's create_revision: read with a Range after an rpc Lock (the
// answer's header revision is the grant's, not the key's), known from the Txn for mutex.
// With rpc, a grant whose key was already gone when etcd granted it has no token (null):
// nothing says what its key's revision was; one whose key expired after the grant has the
// token read as of the grant's revision. mutex always has its own key's revision. Revisions only grow, across
// leader changes too.
//
// acquire(key, ttl): waits in the queue at most min(ttl, max_wait). One that gives up
// revokes its lease, which deletes its key: kFail when etcd confirms that, kUnknown when
// it cannot be reached (the lease is revoked at a later acquire, or expires).
// release(g): kFail "not held" when g's key is gone or belongs to another grant; else
// mutex deletes the key if still the grant's, then revokes the lease; rpc revokes the
// lease (which deletes the key) and calls Unlock only when the revoke got no answer.
// kOk once etcd confirmed the guarded delete or the revoke of a live lease (which still
// had its key: only this client deletes it) — never on Unlock's OK, which etcd gives for
// a key already gone; kFail when the lease had expired, or nothing reached etcd (the
// grant is then still held and kept alive); kUnknown otherwise.
//
// The grant's promise (valid_ms) is the lease's: the send time of its latest renewal that
// etcd answered before the grant returned (or of the LeaseGrant) + the TTL that answer
// gave − the acquire's start; each later renewal is a kRenewed notice (set_notice_listener).
//
// Every call returns within max_wait + 7 × request_timeout. Not thread-safe (the worker
// serializes calls); the keepalive has its own thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/etcd/etcd_connection.h"
#include "backends/etcd/etcd_keepalive.h"
#include "backends/lock_client.h"

namespace fencecheck {

struct EtcdClientConfig {
  std::vector<std::string> endpoints;  // "address:port" of every member
  std::string lock = "rpc";            // "rpc" | "mutex"
  std::chrono::seconds lease_ttl{2};
  std::chrono::milliseconds request_timeout{500};  // one request's answer
  std::chrono::milliseconds max_wait{10000};       // in the queue, at most (ttl caps it too)

  // {"endpoints": [...], "lock": "rpc", "lease_ttl_s": 2, "request_timeout_ms": 500,
  // "max_wait_ms": 10000}; all but endpoints optional. Throws std::invalid_argument
  // naming a bad field.
  static EtcdClientConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
};

class EtcdLockClient : public LockClient {
 public:
  explicit EtcdLockClient(const EtcdClientConfig& config);

  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;
  // kRenewed for each keepalive answer for a held grant's lease (EtcdKeepAlive), told on
  // the keepalive thread; none once the grant is released or given up.
  void set_notice_listener(NoticeListener listener) override;

  // The prefix under which key's lock keys live ("fc/<key>/"), and the lock key of lease.
  static std::string lock_prefix(const std::string& key);
  static std::string lock_key(const std::string& key, std::int64_t lease);

 private:
  using Ms = std::chrono::milliseconds;
  using Clock = EtcdKeepAlive::Clock;
  struct Locked {  // what the wait ended with
    std::string key;
    std::int64_t create_revision = 0;  // 0: not known yet (rpc)
    std::int64_t grant_revision = 0;   // the store's revision when the wait ended
  };
  LockResult lock_rpc(const std::string& key, std::int64_t lease, Ms wait, Locked& out);
  LockResult lock_mutex(const std::string& key, std::int64_t lease, Ms wait, Locked& out);
  // The acquire ends without the lock: revoke the lease (which deletes its key).
  LockResult give_up(std::int64_t lease, const std::string& why);
  // Reads the key and the lease's TTL right after the grant: the token and the evidence;
  // the promise counted from started, the acquire's start.
  LockResult grant(const std::string& key, std::int64_t lease, const Locked& locked, Clock::time_point started);
  void revoke_orphans();

  EtcdClientConfig config_;
  std::unique_ptr<EtcdConnection> connection_;
  std::unique_ptr<EtcdKeepAlive> keepalive_;
  std::map<std::int64_t, std::int64_t> held_;  // lease → the key's create revision (0: none)
  std::vector<std::int64_t> orphans_;          // leases of given-up acquires, not yet revoked
};

}  // namespace fencecheck
