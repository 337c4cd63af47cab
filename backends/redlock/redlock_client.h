// The lock client of the `redlock` backend: antirez's Redlock over N independent Redis
// masters (redis.io, "Distributed Locks with Redis"), one attempt per acquire.
//
// acquire: one random value (20 random bytes, hex) for every instance; T1; `SET key value
// NX PX ttl` sent to all N at once (RedisFanout: one thread, non-blocking sockets), each
// bounded by the per-instance timeout; T2 once every reply or timeout is in. The lock is
// taken iff at least N/2+1 instances said OK and validity = ttl − (T2 − T1) − drift is
// positive, drift = ttl/100 + 2 ms (the redlock-py / node-redlock constants). The grant's
// promise is that validity counted from T1: ttl − drift (promised_validity), so an acquire
// whose replies came after it ran out has valid_ms below its own duration. Otherwise it
// runs the compare-and-delete script on ALL instances. Retrying is the workload's business:
// one acquire is one attempt. There is no fencing token: grants carry token nullopt.
//
// Outcomes (LockClient's rule, applied to a quorum system):
//   acquire kFail not_sent: no SET reached any instance.
//   acquire kFail: no quorum, the lock held elsewhere, or validity expired, AND after the
//     unlock-all fewer than a quorum of instances may still hold our value (each instance
//     that said OK, or did not answer, must have answered the unlock; its reply on the same
//     connection proves the SET came first). A leftover on a minority is no lock: nobody
//     can act on our random value, and it expires with the TTL.
//   acquire kUnknown: a quorum may still hold our value (the SETs or unlocks timed out).
//   release kOk: the script deleted our value on a quorum. kFail "not held": our value was
//     on fewer than a quorum even counting every instance that did not answer (it expired
//     or a restart lost it). kFail also when nothing changed anywhere (no deletion, no
//     unanswered script), with not_sent when nothing reached any instance. kUnknown else.
//
// Options carried in the client config (see RedlockClientConfig):
//   validity_check=off reproduces node-redlock 5.0.0-beta.2, which returns the lock without
//     checking that the validity is still positive once the replies are in (Kleppmann's K4);
//     the grant's promise is still ttl − drift from T1, already over for such a grant.
//   stall_after_send_ms / stall_every: sleep that long on every k-th acquire after the SETs
//     are written and before any reply is read, like a GC pause while replies are in flight.
// Not thread-safe (LockClient's contract).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/lock_client.h"
#include "backends/redlock/redis_fanout.h"
#include "backends/registry.h"

namespace fencecheck {

struct RedlockClientConfig {
  std::vector<RedisEndpoint> instances;
  // How long one instance may take (connect, SET, reply); nullopt: auto_instance_timeout().
  std::optional<std::chrono::milliseconds> instance_timeout;
  bool validity_check = true;
  std::chrono::milliseconds stall_after_send{0};
  int stall_every = 1;

  // The backend options `validity_check`, `instance_timeout_ms`, `stall_after_send_ms`
  // and `stall_every` (others are ignored); instances stay empty. Throws
  // std::invalid_argument naming a bad value.
  static RedlockClientConfig from_options(const BackendOptions& options);
  // {"instances": [{"host", "port"}, …], "instance_timeout_ms": null|N, "validity_check":
  // bool, "stall_after_send_ms": N, "stall_every": N}; all but instances optional. Throws
  // std::invalid_argument naming a bad field.
  static RedlockClientConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
};

class RedlockClient : public LockClient {
 public:
  explicit RedlockClient(const RedlockClientConfig& config);

  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;

  static std::size_t quorum(std::size_t n) { return n / 2 + 1; }
  static std::chrono::microseconds drift(std::chrono::milliseconds ttl);
  // The validity a grant is promised, counted from T1 (before the SETs are sent): ttl −
  // drift, rounded down to whole ms: the end the validity check measures the replies
  // against (it compares in microseconds).
  static std::chrono::milliseconds promised_validity(std::chrono::milliseconds ttl);
  // max(50 ms, ttl / 200): see redlock_client.cpp for why.
  static std::chrono::milliseconds auto_instance_timeout(std::chrono::milliseconds ttl);

 private:
  std::chrono::milliseconds timeout_for(std::chrono::milliseconds ttl) const;
  std::vector<RedisCommandResult> run_unlock(const std::string& key, const std::string& value,
                                             std::chrono::milliseconds timeout);

  RedlockClientConfig config_;
  RedisFanout fanout_;
  std::uint64_t acquires_ = 0;
  // The TTL each live grant was taken with (its value → ttl), for release's timeout.
  std::map<std::string, std::chrono::milliseconds> grant_ttls_;
};

}  // namespace fencecheck
