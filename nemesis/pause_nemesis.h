// PauseNemesis (family "pause"): SIGSTOP, then SIGCONT after --pause-ms — a long
// GC pause.
//   pause-holder  arms (recorded as "arm"); the next client whose acquire completes is
//                 paused right then, before it can use the lock (the article's scenario)
//   pause-acquirer arms; the next client whose acquire is still in flight 20 ms after it
//                 was sent (the library is working on it, e.g. waiting or retrying) is
//                 paused then: the GC pause between sending and reading that a lock's
//                 validity check exists for. An acquire that returns sooner is skipped, and
//                 one whose reply comes while its client is being stopped is recorded only
//                 after the pause (its acquire-ended waits for it), so the history never
//                 shows a pause of a client whose acquire had already returned.
//   pause-after-send arms the clients (NodeProcesses::arm_pause_inside): the next acquire
//                 sent carries the pause, and its lock library (an adapter that can) stops
//                 its own thread right after it sent the lock commands, before it reads a
//                 reply — the same GC pause, at the exact point. Recorded "pause" only once
//                 the library says it paused (its "paused" notice), "resume" when the
//                 acquire comes back; an acquire that came back without pausing records the
//                 pause as "not_applied".
//   pause-client  a random client node
//   pause-server  a random server node
//   freeze-client, freeze-server: the whole node frozen instead (NodeProcesses::freeze,
//                 docker pause), every process at once and no signal to see
// One pause at a time. A pause whose node is down (killed by the crash family) is recorded
// with "not_applied" and nothing is resumed for it. Thread-safe as nemesis.h says: the
// family's lock is held across a pause (≤ kSignalBound), describe_active never waits for
// it; the lock-aware faults listen on the lock-event bus.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "nemesis/fault_status.h"
#include "nemesis/nemesis.h"

namespace fencecheck {

class PauseNemesis : public Nemesis {
 public:
  PauseNemesis(NemesisContext& ctx, const FaultOptions& options);
  void start(const std::string& fault, std::mt19937_64& rng) override;
  // "arm" re-arms a lock-aware fault; "pause" of pause-client/-server pauses the same node
  // for the same ms; the lock-aware faults' "pause" and every "resume" follow by themselves.
  void replay(const std::string& f, const nlohmann::json& value) override;
  void tick() override;
  std::optional<TimeSource::Instant> due() const override;
  bool active() const override { return status_.any(); }
  bool acting() const override { return status_.acting(); }
  std::vector<std::string> describe_active() const override { return status_.shown(); }
  void heal() override;

 private:
  struct Paused {
    std::string fault;
    std::string node;
    NodeProcesses* role;
    TimeSource::Instant until;
    bool frozen;  // a freeze-… fault: thawed, not resumed
  };
  // An acquire in flight, as pause-acquirer sees it.
  struct Flight {
    TimeSource::Instant sent;
    bool pausing = false;  // its client is being stopped: its acquire-ended waits
  };
  // The pause-after-send in progress: the client whose acquire carries it.
  struct Inside {
    std::string node;
    std::chrono::milliseconds ms;
    bool recorded = false;  // its "pause" line is written (the library said it paused)
  };
  void on_lock_event(const LockEvent& e);
  void on_acquire_ended(const LockEvent& e);
  void pause_locked(const std::string& fault, NodeProcesses& role, const std::string& node,
                    std::chrono::milliseconds ms);
  void arm_locked(const std::string& fault, std::chrono::milliseconds ms);
  // pause-acquirer, if armed: stops a client whose acquire has been in flight for the
  // delay by now, unless that acquire comes back first.
  void pause_acquirer_locked();
  void record_inside_pause_locked(const std::string& node);
  void resume_locked();
  void show_locked();

  NemesisContext& ctx_;
  FaultOptions options_;
  mutable std::mutex mu_;  // the family's action lock
  // The lock-aware fault armed, or none: read without the lock by the client threads'
  // subscribers.
  enum class Armed { kNone, kHolder, kAcquirer, kAfterSend };
  std::atomic<Armed> armed_{Armed::kNone};
  std::chrono::milliseconds armed_ms_{0};
  mutable std::mutex flight_mu_;  // in_flight_: never held across a fault action
  std::condition_variable flight_cv_;  // a client's stop finished (Flight::pausing)
  std::map<std::string, Flight> in_flight_;  // client → its acquire in flight
  std::optional<Paused> paused_;
  std::optional<Inside> inside_;
  std::atomic<bool> inside_set_{false};  // inside_ has a value: read without the lock
  FaultStatus status_;
  LockEventSubscriptions subscriptions_;  // last: dropped first, before what it reads
};

// The registry's factory for the family.
std::unique_ptr<Nemesis> make_pause_nemesis(NemesisContext& ctx, const FaultOptions& options);

}  // namespace fencecheck
