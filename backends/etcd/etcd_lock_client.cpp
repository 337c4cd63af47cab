#include "backends/etcd/etcd_lock_client.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <stdexcept>

#include "backends/registry.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

using lock_result::fail;
using lock_result::unknown;

// A call that got no answer: what it means for the op.
LockResult unanswered(const EtcdStatus& s, const std::string& what) {
  if (s.end == EtcdEnd::kNotSent) return fail(what + " not sent: " + s.describe(), true);
  if (s.end == EtcdEnd::kRefused) return fail(what + " refused: " + s.describe());
  return unknown(what + ": no answer: " + s.describe());
}

std::string hex(std::int64_t lease) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(lease));
  return buf;
}

// etcd's range end for "every key starting with prefix".
std::string prefix_end(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (prefix.empty()) return std::string(1, '\0');
  prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

// clientv3's WithFirstCreate / WithLastCreate: the one key under prefix created first
// (or last), as a Range.
etcdserverpb::RangeRequest by_creation(const std::string& prefix, etcdserverpb::RangeRequest::SortOrder order) {
  etcdserverpb::RangeRequest r;
  r.set_key(prefix);
  r.set_range_end(prefix_end(prefix));
  r.set_sort_order(order);
  r.set_sort_target(etcdserverpb::RangeRequest::CREATE);
  r.set_limit(1);
  return r;
}

// Why a wait for the lock ended without it: its time ran out, or etcd said no.
std::string lock_failure(const EtcdStatus& s, milliseconds wait) {
  if (s.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "no lock within " + std::to_string(wait.count()) + " ms (" + s.describe() + ")";
  }
  return "the wait for the lock failed: " + s.describe();
}

milliseconds left_until(Clock::time_point deadline) {
  return std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
}

}  // namespace

EtcdClientConfig EtcdClientConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("etcd client config must be a JSON object, got " + j.dump());
  EtcdClientConfig c;
  const nlohmann::json endpoints = j.value("endpoints", nlohmann::json());
  if (!endpoints.is_array() || endpoints.empty()) {
    throw std::invalid_argument("etcd client config: \"endpoints\" must be a non-empty array of \"host:port\"");
  }
  for (const auto& e : endpoints) {
    if (!e.is_string() || e.get<std::string>().find(':') == std::string::npos) {
      throw std::invalid_argument("etcd client config: endpoint " + e.dump() + " is not \"host:port\"");
    }
    c.endpoints.push_back(e.get<std::string>());
  }
  const nlohmann::json lock = j.value("lock", nlohmann::json(c.lock));
  if (lock != "rpc" && lock != "mutex") {
    throw std::invalid_argument("etcd client config: \"lock\" must be \"rpc\" or \"mutex\", got " + lock.dump());
  }
  c.lock = lock.get<std::string>();
  constexpr const char* kWhat = "etcd client config";
  c.lease_ttl = std::chrono::seconds(config_number(j, kWhat, "lease_ttl_s", 1, 3600, c.lease_ttl.count()));
  c.request_timeout = milliseconds(config_number(j, kWhat, "request_timeout_ms", 1, 60000, c.request_timeout.count()));
  c.max_wait = milliseconds(config_number(j, kWhat, "max_wait_ms", 1, 3600000, c.max_wait.count()));
  return c;
}

nlohmann::json EtcdClientConfig::to_json() const {
  return {{"endpoints", endpoints},
          {"lock", lock},
          {"lease_ttl_s", lease_ttl.count()},
          {"request_timeout_ms", request_timeout.count()},
          {"max_wait_ms", max_wait.count()}};
}

EtcdLockClient::EtcdLockClient(const EtcdClientConfig& config)
    : config_(config),
      connection_(std::make_unique<EtcdConnection>(config.endpoints)),
      keepalive_(std::make_unique<EtcdKeepAlive>(*connection_, config.lease_ttl)) {}

void EtcdLockClient::set_notice_listener(NoticeListener listener) { keepalive_->set_listener(std::move(listener)); }

std::string EtcdLockClient::lock_prefix(const std::string& key) { return "fc/" + key + "/"; }
std::string EtcdLockClient::lock_key(const std::string& key, std::int64_t lease) {
  return lock_prefix(key) + hex(lease);
}

void EtcdLockClient::revoke_orphans() {
  // One per acquire, so that an unreachable cluster costs one timeout, not one per orphan.
  if (orphans_.empty()) return;
  EtcdStatus s = connection_->lease_revoke(orphans_.front(), config_.request_timeout);
  if (s.ok() || s.not_found()) orphans_.erase(orphans_.begin());
}

LockResult EtcdLockClient::give_up(std::int64_t lease, const std::string& why) {
  keepalive_->drop(lease);
  EtcdStatus s = connection_->lease_revoke(lease, config_.request_timeout);
  if (s.ok() || s.not_found()) return fail(why + "; its lease was revoked");
  orphans_.push_back(lease);
  return unknown(why + "; its lease could not be revoked (" + s.describe() + "), so its key may hold the lock");
}

LockResult EtcdLockClient::acquire(const std::string& key, milliseconds ttl) {
  if (ttl.count() <= 0) return fail("ttl must be positive, got " + std::to_string(ttl.count()));
  if (key.empty()) return fail("the lock key must not be empty", true);
  const Clock::time_point started = Clock::now();
  revoke_orphans();
  etcdserverpb::LeaseGrantResponse granted;
  const Clock::time_point sent = Clock::now();
  EtcdStatus s = connection_->lease_grant(config_.lease_ttl.count(), &granted, config_.request_timeout);
  // A grant whose answer was lost leaves a lease with no key, which locks nothing.
  if (!s.ok()) return fail("no lease: " + s.describe(), s.end == EtcdEnd::kNotSent);
  const std::int64_t lease = granted.id();
  keepalive_->add(lease, {sent, std::chrono::seconds(granted.ttl())});
  const milliseconds wait = std::min(ttl, config_.max_wait);
  Locked locked;
  LockResult r = config_.lock == "mutex" ? lock_mutex(key, lease, wait, locked) : lock_rpc(key, lease, wait, locked);
  if (r.outcome != Outcome::kOk) return r;
  return grant(key, lease, locked, started);
}

LockResult EtcdLockClient::lock_rpc(const std::string& key, std::int64_t lease, milliseconds wait, Locked& out) {
  std::string name = lock_prefix(key);
  name.pop_back();  // the server adds the "/"
  v3lockpb::LockResponse resp;
  EtcdStatus s = connection_->lock(name, lease, &resp, wait);
  if (!s.ok()) {
    if (s.end == EtcdEnd::kNotSent) {
      keepalive_->drop(lease);
      orphans_.push_back(lease);
      return fail("Lock not sent: " + s.describe(), true);
    }
    return give_up(lease, lock_failure(s, wait));
  }
  out.key = resp.key();
  out.grant_revision = resp.header().revision();
  return {Outcome::kOk, std::nullopt, "", false};
}

LockResult EtcdLockClient::lock_mutex(const std::string& key, std::int64_t lease, milliseconds wait,
                                      Locked& out) {
  const Clock::time_point deadline = Clock::now() + wait;
  const std::string pfx = lock_prefix(key);
  const std::string own = lock_key(key, lease);
  // The recipe's Txn: create own key unless it exists; read the first holder either way.
  const etcdserverpb::RangeRequest owner = by_creation(pfx, etcdserverpb::RangeRequest::ASCEND);
  etcdserverpb::TxnRequest txn;
  etcdserverpb::Compare* cmp = txn.add_compare();
  cmp->set_result(etcdserverpb::Compare::EQUAL);
  cmp->set_target(etcdserverpb::Compare::CREATE);
  cmp->set_key(own);
  cmp->set_create_revision(0);
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(own);
  put->set_lease(lease);
  *txn.add_success()->mutable_request_range() = owner;
  txn.add_failure()->mutable_request_range()->set_key(own);
  *txn.add_failure()->mutable_request_range() = owner;
  etcdserverpb::TxnResponse resp;
  EtcdStatus s = connection_->txn(txn, &resp, config_.request_timeout);
  if (!s.ok()) {
    if (s.end == EtcdEnd::kRefused || s.end == EtcdEnd::kNotSent) {
      keepalive_->drop(lease);
      orphans_.push_back(lease);
      return unanswered(s, "the lock key's Txn");
    }
    return give_up(lease, "no answer to the lock key's Txn (" + s.describe() + ")");
  }
  std::int64_t my_rev = resp.header().revision();
  if (!resp.succeeded()) {
    const auto& kvs = resp.responses(0).response_range().kvs();
    if (kvs.empty()) return give_up(lease, "the lock key vanished between the Txn's compare and its read");
    my_rev = kvs[0].create_revision();
  }
  out = {own, my_rev, resp.header().revision()};
  const auto& first = resp.responses(1).response_range().kvs();
  if (first.empty() || first[0].create_revision() == my_rev) return {Outcome::kOk, std::nullopt, "", false};
  // waitDeletes: until no key under the prefix was created before own.
  for (;;) {
    etcdserverpb::RangeRequest last = by_creation(pfx, etcdserverpb::RangeRequest::DESCEND);
    last.set_max_create_revision(my_rev - 1);
    etcdserverpb::RangeResponse before;
    if (Clock::now() >= deadline) return give_up(lease, "no lock within " + std::to_string(wait.count()) + " ms");
    s = connection_->range(last, &before, std::min(config_.request_timeout, left_until(deadline)));
    if (!s.ok()) return give_up(lease, "waiting for the lock: " + s.describe());
    // As etcd 3.4's recipe: no look at own key once the wait is over (etcd#11456).
    if (before.kvs().empty()) {
      out.grant_revision = before.header().revision();
      return {Outcome::kOk, std::nullopt, "", false};
    }
    s = connection_->wait_delete(before.kvs(0).key(), before.header().revision(), left_until(deadline));
    if (!s.ok()) return give_up(lease, lock_failure(s, wait));
  }
}

LockResult EtcdLockClient::grant(const std::string& key, std::int64_t lease, const Locked& locked,
                                 Clock::time_point started) {
  Grant g;
  g.key = key;
  g.owner = hex(lease);
  g.detail = nlohmann::json::object();
  etcdserverpb::RangeRequest req;
  req.set_key(locked.key);
  etcdserverpb::RangeResponse resp;
  // rpc: the token is the key's create revision, and only this read gives it: asked twice,
  // the second time of the next member. mutex knows it already; the read is evidence.
  std::int64_t token = locked.create_revision;
  EtcdStatus s;
  for (int attempt = 0; attempt < (token == 0 ? 2 : 1) && !s.ok(); ++attempt) {
    s = connection_->range(req, &resp, config_.request_timeout);
  }
  if (s.ok()) {
    const bool exists = !resp.kvs().empty() && resp.kvs(0).lease() == lease;
    g.detail["key_exists"] = exists;
    if (exists) token = resp.kvs(0).create_revision();
  } else if (token == 0) {
    // etcd granted the lock, so giving it back now cannot make this an acquire that did
    // not happen: unknown.
    LockResult r = give_up(lease, "locked, but the lock key's create revision could not be read (" + s.describe() + ")");
    r.outcome = Outcome::kUnknown;
    return r;
  }
  if (token > 0) g.token = token;
  etcdserverpb::LeaseTimeToLiveResponse ttl;
  if (connection_->lease_time_to_live(lease, &ttl, config_.request_timeout).ok()) {
    g.detail["lease_ttl_s"] = ttl.ttl();
  }
  if (g.detail.value("key_exists", true) == false) {
    // Did the key exist when etcd granted the lock? Read the store as of that revision.
    req.set_revision(locked.grant_revision);
    etcdserverpb::RangeResponse then;
    if (locked.grant_revision > 0 && connection_->range(req, &then, config_.request_timeout).ok()) {
      const bool existed = !then.kvs().empty() && then.kvs(0).lease() == lease;
      g.detail["key_at_grant"] = existed;
      // A key that was there at the grant has its create revision, the token, in that read.
      if (existed && !g.token) g.token = then.kvs(0).create_revision();
      g.detail["note"] = existed ? "lease expired after the grant"
                                 : "granted on an expired lease (etcd#11456)";
    }
  }
  held_[lease] = g.token.value_or(0);
  // What the lease promised as the grant returns: its latest renewal's (or the grant's)
  // send + TTL, from the acquire's start. A lease that ran out while the client waited
  // (frozen: etcd#11456) promised less than the acquire took. From now on every renewal
  // is a kRenewed notice.
  if (auto last = keepalive_->hold(lease, key, g.owner)) g.promise = Promise::lasting(last->valid_from(started));
  return {Outcome::kOk, std::move(g), "", false};
}

LockResult EtcdLockClient::release(const Grant& g) {
  std::int64_t lease = 0;
  const char* begin = g.owner.data();
  auto [end, ec] = std::from_chars(begin, begin + g.owner.size(), lease, 16);
  auto held = held_.find(lease);
  if (ec != std::errc() || end != begin + g.owner.size() || held == held_.end()) {
    return fail("not held: " + g.owner + " is not a lease of a grant of this client");
  }
  const std::int64_t token = held->second;
  const std::string key = lock_key(g.key, lease);
  auto forget = [&] {
    held_.erase(lease);
    keepalive_->drop(lease);
  };
  // A look at the key tells "not held" (its lease expired) from a release; when the look
  // gets no answer the release goes ahead and the revoke decides.
  etcdserverpb::RangeRequest req;
  req.set_key(key);
  etcdserverpb::RangeResponse resp;
  EtcdStatus look = connection_->range(req, &resp, config_.request_timeout);
  if (look.ok() && (resp.kvs().empty() || (token > 0 && resp.kvs(0).create_revision() != token))) {
    forget();
    if (!connection_->lease_revoke(lease, config_.request_timeout).ok()) orphans_.push_back(lease);
    return fail("not held: the lock key " + key + " is gone (its lease expired)");
  }
  // What etcd can confirm of a release: a delete guarded by the grant's revision (mutex)
  // that succeeded, or the revoke of a live lease, which still had its key (only this
  // client deletes it) and deletes it. v3lock's Unlock is a bare delete whose OK says
  // nothing of whether the key was still there: rpc revokes first, and unlocks only when
  // the revoke got no answer, to free the key sooner (its OK then decides nothing).
  EtcdStatus unlocked;
  if (config_.lock == "mutex") {
    // Mutex.Unlock deletes the key; only while it is still the grant's (a key that expired
    // in between is not this release's to report).
    etcdserverpb::TxnRequest txn;
    etcdserverpb::Compare* cmp = txn.add_compare();
    cmp->set_result(etcdserverpb::Compare::EQUAL);
    cmp->set_target(etcdserverpb::Compare::CREATE);
    cmp->set_key(key);
    cmp->set_create_revision(token);
    txn.add_success()->mutable_request_delete_range()->set_key(key);
    etcdserverpb::TxnResponse deleted;
    unlocked = connection_->txn(txn, &deleted, config_.request_timeout);
    if (unlocked.ok() && !deleted.succeeded()) unlocked.end = EtcdEnd::kRefused;
  }
  // The lease goes either way.
  EtcdStatus revoked = connection_->lease_revoke(lease, config_.request_timeout);
  if (unlocked.ok() || revoked.ok()) {
    forget();
    return {Outcome::kOk, std::nullopt, "", false};
  }
  if (revoked.not_found()) {
    forget();
    return fail("not held: its lease " + g.owner + " had expired (" + revoked.describe() + ")");
  }
  if (config_.lock != "mutex") unlocked = connection_->unlock(key, config_.request_timeout);
  if (unlocked.end == EtcdEnd::kNotSent && revoked.end == EtcdEnd::kNotSent) {
    // Nothing reached etcd: the grant still holds, and stays kept alive.
    return fail("release not sent: " + unlocked.describe(), true);
  }
  forget();
  orphans_.push_back(lease);
  return unknown("release: no answer (" + unlocked.describe() + "; revoke " + revoked.describe() +
                 "); the lease is revoked later or expires");
}

}  // namespace fencecheck
