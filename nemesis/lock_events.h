// LockEventBus: what the clients' locks do, as it happens — one bus per run. Client sessions
// publish; fault families (a pause of the holder, of an acquirer, inside the library), a
// fault plan's steps and, later, other readers subscribe. Nothing else carries lock events
// to the nemesis.
//
// Events, in the order one client publishes them:
//   acquire-sent   an acquire is about to go to the client's worker (carries the
//                  in-library pause it asks of the lock library, if any)
//   acquire-ended  it came back, whatever the outcome, before its completion is recorded
//                  (so a pause that began while it was in flight is on the record first);
//                  says whether the library actually paused inside it
//   acquire-ok     it came back ok (a grant): after its completion is recorded, before the
//                  client's next op
//   release        a release came back, whatever its outcome, once it is recorded
//   notice         the lock library said something on its own: "lost" (a lock it had
//                  granted is gone), "paused" (it stopped its own thread inside an acquire);
//                  published on the thread that received it, whenever it comes
//
// Threads: publish() runs every subscriber of the event's kind on the publishing thread, in
// subscription order, and returns when they have: a client's next op waits for them, which
// is how "pause the holder before it uses the lock" works. A subscriber must not wait for a
// fault action of another client (its own may bound it: a pause of this very client).
// Subscribe before the first publish and unsubscribe only after the last one (the run
// subscribes as it makes the schedule, before the clients start, and drops the
// subscriptions after they stopped); publish() itself is thread-safe and never allocates
// beyond copying the event. Nothing here blocks but the subscribers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "platform/time_source.h"

namespace fencecheck {

enum class LockEventKind { kAcquireSent, kAcquireOk, kAcquireEnded, kRelease, kNotice };
// "acquire-sent", "acquire-ok", "acquire-ended", "release", "notice"
std::string_view to_string(LockEventKind k);

struct LockEvent {
  LockEventKind kind;
  std::string client;  // the client's node, "c3"
  std::string key;     // the lock, "l0"
  TimeSource::Instant at{};  // when it happened, on the run's TimeSource
  // acquire-sent: the in-library pause this acquire asked for (0: none).
  std::chrono::milliseconds pause_inside{0};
  // acquire-ended of an acquire that asked for an in-library pause: whether the library
  // stopped its own thread inside it; nullopt when that is unknown (its worker did not
  // answer) or no pause was asked.
  std::optional<bool> paused_inside = std::nullopt;
  // notice: what the library said ("lost", "paused") and why.
  std::string notice = {};
  std::string reason = {};
};

class LockEventBus {
 public:
  using Subscriber = std::function<void(const LockEvent&)>;
  // Identifies one subscription, for unsubscribe().
  using Subscription = std::uint64_t;

  Subscription subscribe(std::set<LockEventKind> kinds, Subscriber subscriber);
  void unsubscribe(Subscription s);
  void publish(const LockEvent& e) const;
  // True when someone listens to `kind`: a publisher may skip making an event nobody reads.
  bool wanted(LockEventKind kind) const;

 private:
  struct Entry {
    Subscription id;
    std::set<LockEventKind> kinds;
    Subscriber subscriber;
  };
  using Entries = std::vector<Entry>;
  // A publish reads a snapshot, so that subscribers run without the lock: one client's
  // subscriber never waits behind another client's.
  std::shared_ptr<const Entries> snapshot() const;
  mutable std::mutex mu_;  // entries_ (replaced whole by subscribe and unsubscribe)
  std::shared_ptr<const Entries> entries_ = std::make_shared<const Entries>();
  Subscription next_ = 1;
};

// Subscriptions dropped when it goes: a family holds one for as long as it lives.
class LockEventSubscriptions {
 public:
  explicit LockEventSubscriptions(LockEventBus& bus) : bus_(bus) {}
  ~LockEventSubscriptions() {
    for (auto s : held_) bus_.unsubscribe(s);
  }
  LockEventSubscriptions(const LockEventSubscriptions&) = delete;
  LockEventSubscriptions& operator=(const LockEventSubscriptions&) = delete;
  void add(std::set<LockEventKind> kinds, LockEventBus::Subscriber subscriber) {
    held_.push_back(bus_.subscribe(std::move(kinds), std::move(subscriber)));
  }

 private:
  LockEventBus& bus_;
  std::vector<LockEventBus::Subscription> held_;
};

}  // namespace fencecheck
