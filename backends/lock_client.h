// The LockClient role: one client's view of a lock service, living in a worker process.
//
// Outcome rule, which decides the history's completion type:
//   kOk      the lock service answered and the operation happened (ok).
//   kFail    it definitely did not happen (fail): the service refused (lock held by
//            another client, release of a lock this client does not hold), answered with
//            an error before acting, or no connection could even be established, so
//            nothing was sent.
//   kUnknown it may have happened (info): the request may have been sent and then the
//            reply timed out, or the connection was lost mid-command.
// `error` says why for kFail and kUnknown, and is empty for kOk.
//
// Implementations need not be thread-safe: the worker serializes calls on one client.
// Every call returns within the backend's own connect + command timeouts.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace fencecheck {

enum class Outcome { kOk, kFail, kUnknown };

// What a lock promised its holder (docs/history.md, `valid_ms` and `bound`): either a
// validity in ms, as the client computes it, counted from when it started the acquire (or,
// for a renewal, from when it sent the renewal), or no time at all — the lock lives as long
// as something else does (`bound`: "session", "connection"). The history records it with
// the grant; the exclusion checker blames a violation by it (docs/checkers.md).
struct Promise {
  std::optional<std::int64_t> valid_ms;  // nullopt: no time promise
  std::string bound;                     // with no valid_ms: what the lock lives by
  // The ok value's members: {"valid_ms": N} or {"valid_ms": null, "bound": "session"}.
  nlohmann::json to_json() const {
    nlohmann::json j = {{"valid_ms", valid_ms ? nlohmann::json(*valid_ms) : nlohmann::json()}};
    if (!valid_ms && !bound.empty()) j["bound"] = bound;
    return j;
  }
  static Promise lasting(std::chrono::milliseconds valid) { return {valid.count(), ""}; }
  static Promise bound_to(std::string what) { return {std::nullopt, std::move(what)}; }
};

// What an ok acquire gives its holder, and all that release needs.
struct Grant {
  std::string key;
  std::optional<std::int64_t> token;  // fencing token; nullopt when the backend has none
  std::string owner;                  // the unique value the backend releases by
  // What the lock service said about the grant beyond its token, as members of the acquire's
  // ok value (docs/history.md), e.g. etcd's {"lease_ttl_s": -1}: evidence for a reader of
  // the history; no checker reads it. An object, or null for nothing.
  nlohmann::json detail = nullptr;
  // What the lock promised; nullopt when the client cannot say (the history then has no
  // `valid_ms`, and the checker leaves its violations unclassified).
  std::optional<Promise> promise = std::nullopt;
};

struct LockResult {
  Outcome outcome = Outcome::kFail;
  std::optional<Grant> grant;  // set exactly when an acquire is kOk
  std::string error;
  bool not_sent = false;  // kFail only: no connection, nothing reached the service
  // An acquire after pause_next_acquire_after_send, whatever its outcome: how long the library
  // said it stopped inside it (the kPaused notice, told before this result returns); 0 when
  // it did not stop (it sent no lock command, failed first, never got the request…).
  std::chrono::milliseconds paused_after_send{0};
};

// The results of the outcome rule above, as every lock client returns them.
namespace lock_result {
inline LockResult fail(std::string error, bool not_sent = false) {
  return {Outcome::kFail, std::nullopt, std::move(error), not_sent};
}
inline LockResult unknown(std::string error) { return {Outcome::kUnknown, std::nullopt, std::move(error), false}; }
inline LockResult ok(std::optional<Grant> grant = std::nullopt) { return {Outcome::kOk, std::move(grant), "", false}; }
}  // namespace lock_result

// The owner values one client's grants carry (Grant::owner): its name, a sequence number
// and 64 random bits, "c1:7:00f3…", unique across clients, grants and restarted workers.
// Not thread-safe (one per lock client).
class GrantOwners {
 public:
  explicit GrantOwners(std::string client_name) : client_name_(std::move(client_name)), rng_(std::random_device{}()) {}
  std::string next() {
    char random[17];
    std::snprintf(random, sizeof random, "%016llx", static_cast<unsigned long long>(rng_()));
    return client_name_ + ":" + std::to_string(++grants_) + ":" + random;
  }

 private:
  std::string client_name_;
  std::uint64_t grants_ = 0;
  std::mt19937_64 rng_;
};

// What a lock library tells on its own, outside any reply (adapters/PROTOCOL.md, "Events").
struct LibraryNotice {
  enum class Kind {
    kLost,    // a grant was lost: key, owner (Grant::owner) and the library's reason
    kPaused,  // the acquire in flight on key stops its thread for `pause` now (pause-after-send)
    kRenewed,  // the grant (key, owner) was extended by the client on its own: `valid`
  };
  Kind kind = Kind::kLost;
  std::string key;
  std::string owner;                   // kLost
  std::string reason;                  // kLost
  std::chrono::milliseconds pause{0};  // kPaused
  // kRenewed: the validity the renewal promised, counted from when it was sent, minus what
  // has passed since (so that the notice's arrival plus `valid` is the promised end).
  std::chrono::milliseconds valid{0};
};

class LockClient {
 public:
  virtual ~LockClient() = default;
  // Takes the lock on key for ttl unless another grant holds it.
  virtual LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) = 0;
  // Gives the lock back if g still holds it; kFail "not held" otherwise (e.g. expired).
  virtual LockResult release(const Grant& g) = 0;

  // Told what the lock library says on its own, as it says it. Called on a thread of the
  // client's own, one notice at a time, at any time, also while an acquire or release is in
  // flight; it must not wait for those. kLost comes at any moment; kPaused only during an
  // acquire after pause_next_acquire_after_send, at most once, before that acquire returns.
  // kRenewed after each renewal the client makes by itself (a lease kept alive in the
  // background: etcd's keepalive, redis-semaphore's refresh), for a grant it still holds.
  using NoticeListener = std::function<void(const LibraryNotice&)>;
  virtual void set_notice_listener(NoticeListener) {}
  // The next acquire stops the client's own thread for `pause` right after it sent its lock
  // commands (the pause-after-send fault), if it sends any; the kPaused notice and the
  // result's paused_after_send say whether it did. Only lock libraries whose adapter can do
  // it (Capability::kPausesInsideClient in its AdapterInfo); the run refuses the fault for
  // every other client, and any other client ignores it (paused_after_send stays 0).
  virtual void pause_next_acquire_after_send(std::chrono::milliseconds pause) { (void)pause; }
};

}  // namespace fencecheck
