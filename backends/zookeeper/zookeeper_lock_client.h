// The lock client of the `zookeeper` backend: the lock recipe of the ZooKeeper docs
// ("Locks" in recipes.md) over one session, with the lock node's czxid as fencing token.
//
// acquire(key, ttl): create the ephemeral-sequential node /fc/<key>/lock-<guid>- (its
// parents persistent, made on demand); list the children; the lowest sequence number
// holds the lock; otherwise watch the immediate predecessor (getData with a watch) and
// look again when it goes. The token is the czxid of the client's own node, from the
// create's Stat: zxids only grow, across leader changes too (the high 32 bits are the
// epoch), whereas the sequence suffix is a per-parent counter. An acquire that does not
// reach the head of the queue within min(ttl, max_wait) deletes its node and fails with
// "lock held by another client". The guid finds the node again when a create's answer
// was lost with the connection (the recipe's recoverable error).
//
// ttl is not a lease here: ZooKeeper has none. The lock lasts as long as the session,
// which the ensemble expires session_timeout after the client went silent (a pause, a
// partition); the holder learns it only when it reaches the ensemble again. ttl only
// bounds how long acquire waits in the queue. A grant promises no time: bound "session".
//
// release(g): delete the grant's node; "not held" when it is gone (the session expired)
// or when g is not a grant of this client (ZooKeeper would let anyone delete it).
//
// Outcomes (LockClient's rule): nothing is reported ok unless the session was connected
// when the answer came. kFail when nothing was sent (not connected within
// connect_timeout), the ensemble refused, or the session expired (its nodes are gone). A
// connection loss or a missing answer leaves kUnknown, unless the session came back in
// time and a look at the children settled it. Nodes this client gave up on but could not
// confirm deleted are deleted once the session is connected again.
//
// Every call returns within connect_timeout + max_wait + 4 × request_timeout (usually
// far sooner: that bound needs every request to go unanswered). Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/lock_client.h"
#include "backends/zookeeper/zk_session.h"

namespace fencecheck {

struct ZooKeeperClientConfig {
  std::string hosts;  // "10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181"
  std::chrono::milliseconds session_timeout{6000};
  std::chrono::milliseconds connect_timeout{1000};  // for the session to be connected
  std::chrono::milliseconds request_timeout{1000};  // for one request's answer
  std::chrono::milliseconds max_wait{2000};         // in the queue, at most (ttl caps it too)

  // {"hosts": …, "session_timeout_ms": 6000, "connect_timeout_ms": 1000,
  // "request_timeout_ms": 1000, "max_wait_ms": 2000}; all but hosts optional. Throws
  // std::invalid_argument naming a bad field.
  static ZooKeeperClientConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
};

class ZooKeeperLockClient : public LockClient {
 public:
  // client_name makes guids unique across workers; it is the worker's node name.
  ZooKeeperLockClient(const ZooKeeperClientConfig& config, std::string client_name);

  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;

  // The znode under which key's lock nodes live.
  static std::string lock_dir(const std::string& key);
  // The session, for tests that end it or watch its state.
  ZkSession& session() { return session_; }

 private:
  using Clock = ZkSession::Clock;
  struct Created;  // the client's node in the queue, once known

  std::string new_guid();
  // Creates the node, finding it by guid after a lost answer.
  LockResult create_node(const std::string& dir, const std::string& guid, Created& out);
  // Waits for the head of the queue until wait_until.
  LockResult wait_turn(const std::string& key, const Created& own, std::uint64_t generation,
                       Clock::time_point wait_until, Clock::time_point started);
  // The acquire ends without the lock: deletes own node. kFail with `why` when the node
  // is gone for sure, kUnknown otherwise.
  LockResult give_up(const std::string& path, const std::string& why);
  // Deletes nodes of lost creates whose guids turned up, once connected.
  void sweep_lost_creates(Clock::time_point deadline);
  bool make_parents(const std::string& dir, Clock::time_point deadline, std::string& error);

  ZooKeeperClientConfig config_;
  std::string client_name_;
  ZkSession session_;
  std::uint64_t grants_ = 0;
  std::mt19937_64 rng_;
  std::map<std::string, std::uint64_t> held_;  // own node path → session generation
  struct LostCreate {
    std::string dir, guid;
    std::uint64_t generation;
  };
  std::vector<LostCreate> lost_creates_;
};

}  // namespace fencecheck
