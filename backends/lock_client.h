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
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace fencecheck {

enum class Outcome { kOk, kFail, kUnknown };

// What an ok acquire gives its holder, and all that release needs.
struct Grant {
  std::string key;
  std::optional<std::int64_t> token;  // fencing token; nullopt when the backend has none
  std::string owner;                  // the unique value the backend releases by
  // What the lock service said about the grant beyond its token, as members of the acquire's
  // ok value (docs/history.md), e.g. etcd's {"lease_ttl_s": -1}: evidence for a reader of
  // the history; no checker reads it. An object, or null for nothing.
  nlohmann::json detail = nullptr;
};

struct LockResult {
  Outcome outcome = Outcome::kFail;
  std::optional<Grant> grant;  // set exactly when an acquire is kOk
  std::string error;
  bool not_sent = false;  // kFail only: no connection, nothing reached the service
};

class LockClient {
 public:
  virtual ~LockClient() = default;
  // Takes the lock on key for ttl unless another grant holds it.
  virtual LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) = 0;
  // Gives the lock back if g still holds it; kFail "not held" otherwise (e.g. expired).
  virtual LockResult release(const Grant& g) = 0;

  // Told when the lock library says that a grant was lost (adapters/PROTOCOL.md, `lost`):
  // the grant's key and owner, and the library's reason. Called on a thread of the
  // client's own, at any time, also while an acquire or release is in flight; it must not
  // wait for those. fencecheck's own clients never call it.
  using LostListener =
      std::function<void(const std::string& key, const std::string& owner, const std::string& reason)>;
  virtual void set_lost_listener(LostListener) {}
  // The next acquire stops the client's own thread for `pause` right after it sent its lock
  // commands (the pause-after-send fault). Only lock libraries whose adapter can do it
  // (AdapterInfo::pauses_after_send); the run refuses the fault for every other client.
  virtual void pause_next_acquire_after_send(std::chrono::milliseconds pause) { (void)pause; }
};

}  // namespace fencecheck
