#include "backends/zookeeper/zookeeper_lock_client.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "backends/registry.h"

namespace fencecheck {

struct ZooKeeperLockClient::Created {
  std::string path;
  std::int64_t czxid = 0;
};

namespace {

using std::chrono::milliseconds;
using Reply = ZkSession::Reply;
using State = ZkSession::State;
using ZkStatus = Reply::Status;

using lock_result::fail;
using lock_result::unknown;

// Answers after which the request may or may not have been applied, or was dropped
// unapplied with the connection: the session has to settle before anything is known.
bool connection_trouble(const Reply& r) {
  if (r.status == ZkStatus::kNoReply) return true;
  return r.status == ZkStatus::kAnswered &&
         (r.rc == ZCONNECTIONLOSS || r.rc == ZOPERATIONTIMEOUT || r.rc == ZCLOSING || r.rc == ZSESSIONMOVED);
}

// The session is over: ZooKeeper deleted its nodes, or the library refuses a dead handle.
bool session_gone(const Reply& r) {
  return (r.status == ZkStatus::kAnswered && r.rc == ZSESSIONEXPIRED) ||
         (r.status == ZkStatus::kNotSent && r.rc == ZINVALIDSTATE);
}

std::string describe(const Reply& r) {
  switch (r.status) {
    case ZkStatus::kNotSent: return "not sent: " + zk_error_name(r.rc);
    case ZkStatus::kNoReply: return "no answer in time";
    case ZkStatus::kAnswered: break;
  }
  return zk_error_name(r.rc);
}

// The sequence number of "lock-<guid>-0000000012"; -1 for a name without one.
std::int64_t sequence_of(const std::string& name) {
  std::size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 >= name.size()) return -1;
  std::int64_t n = -1;
  auto [end, ec] = std::from_chars(name.data() + dash + 1, name.data() + name.size(), n);
  return ec == std::errc() && end == name.data() + name.size() ? n : -1;
}

std::string ms_text(ZkSession::Clock::time_point since) {
  auto d = std::chrono::duration_cast<milliseconds>(ZkSession::Clock::now() - since);
  return std::to_string(d.count()) + " ms";
}

milliseconds positive_ms(const nlohmann::json& j, const char* field, milliseconds fallback) {
  return milliseconds(config_number(j, "zookeeper client config", field, 1, 3600000, fallback.count()));
}

}  // namespace

ZooKeeperClientConfig ZooKeeperClientConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("zookeeper client config must be a JSON object, got " + j.dump());
  if (!j.contains("hosts") || !j.at("hosts").is_string() || j.at("hosts").get<std::string>().empty()) {
    throw std::invalid_argument("zookeeper client config: \"hosts\" must be a non-empty string");
  }
  ZooKeeperClientConfig c;
  c.hosts = j.at("hosts").get<std::string>();
  c.session_timeout = positive_ms(j, "session_timeout_ms", c.session_timeout);
  c.connect_timeout = positive_ms(j, "connect_timeout_ms", c.connect_timeout);
  c.request_timeout = positive_ms(j, "request_timeout_ms", c.request_timeout);
  c.max_wait = positive_ms(j, "max_wait_ms", c.max_wait);
  return c;
}

nlohmann::json ZooKeeperClientConfig::to_json() const {
  return {{"hosts", hosts},
          {"session_timeout_ms", session_timeout.count()},
          {"connect_timeout_ms", connect_timeout.count()},
          {"request_timeout_ms", request_timeout.count()},
          {"max_wait_ms", max_wait.count()}};
}

ZooKeeperLockClient::ZooKeeperLockClient(const ZooKeeperClientConfig& config, std::string client_name)
    : config_(config),
      client_name_(std::move(client_name)),
      session_(config.hosts, config.session_timeout),
      rng_(std::random_device{}()) {}

std::string ZooKeeperLockClient::lock_dir(const std::string& key) { return "/fc/" + key; }

std::string ZooKeeperLockClient::new_guid() {
  std::string name = client_name_;
  for (char& c : name) {
    if (c == '/' || c == '-') c = '_';  // '/' splits paths; '-' ends the guid
  }
  char random[17];
  std::snprintf(random, sizeof random, "%016llx", static_cast<unsigned long long>(rng_()));
  return name + "." + std::to_string(++grants_) + "." + random;
}

bool ZooKeeperLockClient::make_parents(const std::string& dir, Clock::time_point deadline,
                                       std::string& error) {
  // Persistent, not container nodes: the server may delete an empty container, and a
  // recreated parent would lose nothing we rely on, but there is no reason to churn.
  for (std::size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string prefix = dir.substr(0, slash);
    Reply r = session_.create(prefix, "", ZOO_PERSISTENT, deadline);
    if (!r.answered_ok() && !(r.status == ZkStatus::kAnswered && r.rc == ZNODEEXISTS)) {
      error = "cannot create " + prefix + ": " + describe(r);
      return false;
    }
    if (slash == std::string::npos) return true;
  }
}

void ZooKeeperLockClient::sweep_lost_creates(Clock::time_point deadline) {
  std::vector<LostCreate> pending;
  for (const LostCreate& lost : lost_creates_) {
    if (lost.generation != session_.generation()) continue;  // went with its session
    Reply r = session_.children(lost.dir, deadline);
    if (!r.answered_ok()) {
      if (!(r.status == ZkStatus::kAnswered && r.rc == ZNONODE)) pending.push_back(lost);
      continue;
    }
    for (const std::string& child : r.children) {
      if (child.rfind("lock-" + lost.guid + "-", 0) == 0) session_.add_orphan(lost.dir + "/" + child);
    }
  }
  lost_creates_ = std::move(pending);
  session_.sweep(deadline);
}

LockResult ZooKeeperLockClient::acquire(const std::string& key, milliseconds ttl) {
  if (ttl.count() <= 0) return fail("ttl must be positive, got " + std::to_string(ttl.count()));
  if (key.empty()) return fail("the lock key must not be empty", true);
  const Clock::time_point started = Clock::now();
  State s = session_.connect(started + config_.connect_timeout);
  if (s != State::kConnected) {
    return fail("not connected to ZooKeeper (" + config_.hosts + ") within " + ms_text(started), true);
  }
  sweep_lost_creates(Clock::now() + config_.request_timeout);
  const std::uint64_t generation = session_.generation();
  Created own;
  LockResult created = create_node(lock_dir(key), new_guid(), own);
  if (created.outcome != Outcome::kOk) return created;
  return wait_turn(key, own, generation, Clock::now() + std::min(ttl, config_.max_wait), started);
}

LockResult ZooKeeperLockClient::create_node(const std::string& dir, const std::string& guid, Created& out) {
  const Clock::time_point deadline = Clock::now() + config_.request_timeout;
  const std::string prefix = dir + "/lock-" + guid + "-";
  Reply r = session_.create(prefix, client_name_, ZOO_EPHEMERAL_SEQUENTIAL, deadline);
  if (r.status == ZkStatus::kAnswered && r.rc == ZNONODE) {
    std::string error;
    if (!make_parents(dir, deadline, error)) return fail(error);
    r = session_.create(prefix, client_name_, ZOO_EPHEMERAL_SEQUENTIAL, deadline);
  }
  if (r.answered_ok()) {
    out = {r.path, r.stat.czxid};
    return {Outcome::kOk, std::nullopt, "", false};
  }
  if (session_gone(r)) return fail("session expired: " + describe(r));
  if (r.status == ZkStatus::kNotSent) return fail("create of " + prefix + " " + describe(r), true);
  if (!connection_trouble(r)) return fail("create of " + prefix + " refused: " + describe(r));
  if (r.status == ZkStatus::kNoReply) {
    // Its answer may still come; a late success makes the node an orphan (ZkSession).
    lost_creates_.push_back({dir, guid, session_.generation()});
    return unknown("no answer to the create of the lock node within " +
                   std::to_string(config_.request_timeout.count()) + " ms");
  }
  // The recipe's recoverable error: the create may have happened; once the session is
  // back, the guid finds the node.
  State s = session_.settle(deadline);
  if (s == State::kExpired) return fail("session expired while creating the lock node");
  Reply list = s == State::kConnected ? session_.children(dir, deadline) : Reply{};
  if (!list.answered_ok()) {
    lost_creates_.push_back({dir, guid, session_.generation()});
    return unknown("connection lost while creating the lock node (" + describe(r) + "); not back in time");
  }
  for (const std::string& child : list.children) {
    if (child.rfind("lock-" + guid + "-", 0) != 0) continue;
    Reply stat = session_.exists(dir + "/" + child, deadline);
    if (!stat.answered_ok()) return give_up(dir + "/" + child, "lost the lock node's czxid: " + describe(stat));
    out = {dir + "/" + child, stat.stat.czxid};
    return {Outcome::kOk, std::nullopt, "", false};
  }
  lost_creates_.push_back({dir, guid, session_.generation()});  // in case it still shows up
  return fail("connection lost while creating the lock node, and the create did not happen");
}

LockResult ZooKeeperLockClient::wait_turn(const std::string& key, const Created& own,
                                          std::uint64_t generation, Clock::time_point wait_until,
                                          Clock::time_point started) {
  const std::string dir = lock_dir(key);
  const std::string own_name = own.path.substr(dir.size() + 1);
  while (true) {
    if (Clock::now() >= wait_until) {
      return give_up(own.path, "lock held by another client (waited " + ms_text(started) + ")");
    }
    Reply r = session_.children(dir, Clock::now() + config_.request_timeout);
    std::string predecessor;
    if (r.answered_ok()) {
      std::vector<std::pair<std::int64_t, std::string>> queue;
      for (const std::string& child : r.children) {
        if (std::int64_t seq = sequence_of(child); seq >= 0) queue.emplace_back(seq, child);
      }
      std::sort(queue.begin(), queue.end());
      auto at = std::find_if(queue.begin(), queue.end(), [&](const auto& e) { return e.second == own_name; });
      if (at == queue.end()) return fail("own lock node " + own.path + " is gone (session expired?)");
      if (at == queue.begin()) {
        // Only a connected session's answer counts: during a connection loss the lock may
        // already be lost without this client knowing.
        if (session_.state() != State::kConnected || session_.generation() != generation) {
          return give_up(own.path, "connection lost as the lock was granted");
        }
        held_[own.path] = generation;
        Grant g{key, own.czxid, own.path};
        g.promise = Promise::bound_to("session");  // an ephemeral node: no time promised
        return {Outcome::kOk, std::move(g), "", false};
      }
      predecessor = dir + "/" + std::prev(at)->second;
      std::uint64_t seen = session_.events();
      r = session_.watch(predecessor, Clock::now() + config_.request_timeout);
      if (r.answered_ok()) session_.wait_event(seen, wait_until);
      if (r.answered_ok() || (r.status == ZkStatus::kAnswered && r.rc == ZNONODE)) continue;
    }
    if (session_gone(r)) return fail("session expired while waiting for the lock: its nodes are gone");
    if (!connection_trouble(r)) return give_up(own.path, "unexpected answer while waiting: " + describe(r));
    State s = session_.settle(wait_until);
    if (s == State::kExpired) return fail("session expired while waiting for the lock: its nodes are gone");
    if (s != State::kConnected) return give_up(own.path, "connection lost while waiting for the lock");
  }
}

LockResult ZooKeeperLockClient::give_up(const std::string& path, const std::string& why) {
  const Clock::time_point deadline = Clock::now() + config_.request_timeout;
  for (bool retried = false;; retried = true) {
    Reply r = session_.remove(path, deadline);
    if (session_gone(r)) return fail(why + "; the session expired, taking the lock node with it");
    if (r.status == ZkStatus::kAnswered && (r.rc == ZOK || r.rc == ZNONODE)) return fail(why);
    if (!connection_trouble(r) || retried) break;
    State s = session_.settle(deadline);
    if (s == State::kExpired) return fail(why + "; the session expired, taking the lock node with it");
    if (s != State::kConnected) break;
  }
  session_.add_orphan(path);
  return unknown(why + "; the delete of own lock node " + path +
                 " is unconfirmed (retried once the session is connected)");
}

LockResult ZooKeeperLockClient::release(const Grant& g) {
  auto it = held_.find(g.owner);
  // Any client may delete any node; only this client's own grants are its to release.
  if (it == held_.end()) return fail("not held");
  const std::uint64_t generation = it->second;
  held_.erase(it);
  if (session_.state() == State::kExpired || session_.generation() != generation) {
    return fail("not held: its session expired");
  }
  const Clock::time_point started = Clock::now();
  State s = session_.connect(started + config_.connect_timeout);
  if (s == State::kExpired) return fail("not held: its session expired");
  if (s != State::kConnected) {
    // The session may still live, and the node with it.
    session_.add_orphan(g.owner);
    return unknown("not connected to ZooKeeper within " + ms_text(started) +
                   "; the lock node is deleted once the session is connected, if it still lives");
  }
  const Clock::time_point deadline = Clock::now() + config_.request_timeout;
  for (bool retried = false;; retried = true) {
    Reply r = session_.remove(g.owner, deadline);
    if (session_gone(r)) return fail("not held: its session expired");
    if (r.answered_ok()) return {Outcome::kOk, std::nullopt, "", false};
    // After a lost delete, in a session that is still the same, only that delete could
    // have removed the node.
    if (r.status == ZkStatus::kAnswered && r.rc == ZNONODE) {
      return retried ? LockResult{Outcome::kOk, std::nullopt, "", false} : fail("not held");
    }
    if (!connection_trouble(r)) return fail("delete refused: " + describe(r), r.status == ZkStatus::kNotSent);
    if (retried) break;
    State after = session_.settle(deadline);
    if (after == State::kExpired) return fail("not held: its session expired");
    if (after != State::kConnected) break;
  }
  session_.add_orphan(g.owner);
  return unknown("connection lost during the release; the lock node is deleted once the session is connected");
}

}  // namespace fencecheck
