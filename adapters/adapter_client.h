// AdapterLockClient: the LockClient of a lock library, spoken to through its adapter
// (adapters/PROTOCOL.md): the adapter program runs as this process's child and gets one
// request at a time.
//
// Outcomes follow lock_client.h: `*_ok` is kOk; an error with a definite code (10, 11,
// 12, 14, 22) is kFail; an indefinite code, or no reply by the op timeout, is kUnknown.
// After a missing reply the adapter is stopped and a fresh one (sent `init` again) serves
// the next call: the old one may still be acting, so nothing it says is trusted again.
//
// A broken adapter is not a result about its library: a line on stdout that is no
// protocol message, a reply to a msg_id never sent, an `acquire_ok` without a lease or with
// a token, valid_ms or bound of the wrong kind, a `lost` without the capability or without
// its key and lease, a `renewed` without auto_renew or without its key, lease and integer
// valid_ms, a `paused` that PROTOCOL.md's rules forbid (no capability; no acquire with
// pause_after_send_ms in flight; another key or ms; twice), an exit nobody asked for, or no
// first `init_ok` within the init timeout throw AdapterBroken, whose message names the
// adapter and quotes its stderr (the log). A replacement that does not answer `init` in
// time is only an unknown outcome (a paused client resumes with every deadline passed).
// Events go to the NoticeListener: `lost` as kLost, `paused` as kPaused, `renewed` as
// kRenewed (valid = its valid_ms).
//
// The promise (Grant::promise): acquire_ok's valid_ms, an integer, is Promise::lasting; null
// is Promise::bound_to(its `bound`, "" when absent); no valid_ms member is no promise.
//
// pause-after-send: a `paused` event read while its acquire is in flight is told to the
// listener before that acquire returns, and the acquire's paused_after_send (also
// AdapterBroken's, when the adapter breaks after it) is its ms; one that comes after the
// acquire gave up on its reply is dropped with the adapter, so the two always agree.
//
// A grant's owner is "<n>:<lease>", n counting the adapters started: leases need only be
// unique per adapter process, and a grant of a replaced adapter is known for one (its
// release or extend then fails without asking anyone: that process is gone).
//
// Not thread-safe apart from the listener (LockClient's rule: calls are serialized).
// Blocking: the constructor up to init_timeout; acquire, release and extend up to the op
// timeout plus a 500 ms grace (plus an init when the adapter had to be replaced).
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/adapter_process.h"
#include "adapters/registry.h"
#include "backends/lock_client.h"

namespace fencecheck {

class AdapterBroken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // Thrown by an acquire whose adapter said `paused` before it broke: that pause (its
  // notice was told); 0 otherwise.
  std::chrono::milliseconds paused_after_send{0};
};

struct AdapterSettings {
  const AdapterInfo* adapter = nullptr;
  std::filesystem::path program;        // empty: adapter_program(*adapter)
  std::string node;                     // the client node: the adapter's node_id
  std::string backend;                  // the backend's name, init's backend.kind
  nlohmann::json client_config;         // LockServer::client_config()
  std::vector<std::string> endpoints;   // BackendInfo::endpoints(client_config)
  std::filesystem::path log;            // the adapter's stderr
  std::chrono::milliseconds op_timeout{5000};
  std::chrono::milliseconds ttl{1000};             // the run's lease (init's lock.ttl_ms)
  std::chrono::milliseconds acquire_timeout{500};  // how long an acquire may wait for a held lock
  std::chrono::milliseconds init_timeout{10000};
  // The adapter's own options (--client-opt, resolved): init's `options`, a JSON object.
  nlohmann::json options = nlohmann::json::object();
};

class AdapterLockClient final : public LockClient {
 public:
  // How long a reply may come after the op timeout (a worker paused with its adapter sees
  // its deadline passed the moment it resumes, before the adapter could answer).
  static constexpr std::chrono::milliseconds kReplyGrace{500};

  // Starts the adapter and waits for its init_ok. Throws AdapterBroken.
  explicit AdapterLockClient(AdapterSettings settings);
  ~AdapterLockClient() override;

  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;
  // Lengthens g's lease to ttl from now; kFail "not supported" without the capability.
  LockResult extend(const Grant& g, std::chrono::milliseconds ttl);
  void set_notice_listener(NoticeListener listener) override;
  void pause_next_acquire_after_send(std::chrono::milliseconds pause) override { next_pause_ = pause; }

  // The last init_ok's body: library, version, capabilities.
  nlohmann::json init_reply() const;
  bool can(const std::string& capability) const;
  // The adapter's process id (0 when none is running), for tests that signal it.
  int pid() const;

 private:
  struct Reply;
  // Sends body (its msg_id is set here) and waits for the reply until deadline.
  Reply call(nlohmann::json body, std::chrono::steady_clock::time_point deadline);
  // A fresh adapter, init'ed by deadline. Throws AdapterBroken; false when a replacement
  // (not the first adapter) did not answer init in time (it is stopped again).
  bool start(std::chrono::steady_clock::time_point deadline, bool first);
  // Before an op: an adapter is running, or a LockResult saying why none could be had.
  std::optional<LockResult> ensure_running(const char* op);
  // The lease the current adapter gave for owner; nullopt when another adapter granted it.
  std::optional<std::string> lease_of(const std::string& owner) const;
  void on_line(const std::string& line, std::uint64_t instance);
  // The events and replies on_line reads, with mu_ held; an event returns its notice.
  // `lost` and `renewed`: events about one grant (key and lease) of adapter `instance`.
  std::optional<LibraryNotice> grant_event_locked(const nlohmann::json& body, const std::string& line,
                                                  std::uint64_t instance);
  std::optional<LibraryNotice> paused_event_locked(const nlohmann::json& body, const std::string& line);
  void reply_locked(const nlohmann::json& body, const std::string& line);
  void break_locked(const std::string& why);  // the first reason the adapter broke is kept
  bool can_locked(const std::string& capability) const;
  void on_end(const std::string& how);
  [[noreturn]] void broken(const std::string& what) const;
  LockResult outcome(const Reply& r, const char* op) const;
  // The promise of an acquire_ok (its valid_ms and bound); nullopt without valid_ms. Throws
  // AdapterBroken for a valid_ms neither integer nor null, or a bound that is no string.
  std::optional<Promise> promise_in(const nlohmann::json& ok) const;

  const AdapterSettings settings_;
  std::uint64_t instance_ = 0;  // adapters started so far; the current one's number
  std::chrono::milliseconds next_pause_{0};  // for the next acquire (pause_after_send_ms)
  mutable std::mutex mu_;       // below: shared with the reader thread
  std::condition_variable replied_;
  std::int64_t last_id_ = 0;
  std::int64_t awaited_ = 0;  // the msg_id a call waits for; 0: none
  std::optional<nlohmann::json> reply_;
  std::string broken_;        // why the adapter broke the protocol; empty while it has not
  // The current call's pause_after_send_ms, if its request carried one (PROTOCOL.md, `paused`).
  struct PauseWatch {
    enum class State { kNone, kInFlight, kAnswered, kAbandoned };  // kAbandoned: no reply in time
    State state = State::kNone;
    std::string key;
    std::int64_t ms = 0;
    bool paused = false;  // its `paused` event came and was told
  };
  PauseWatch pause_;
  nlohmann::json init_ok_;
  NoticeListener listener_;
  // Last: destroyed first, so that its reader thread (which uses the members above) is
  // joined before they go, also when the constructor throws.
  std::unique_ptr<AdapterProcess> process_;
};

}  // namespace fencecheck
