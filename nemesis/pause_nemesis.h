// PauseNemesis (family "pause"): SIGSTOP, then SIGCONT after --pause-ms — a long
// GC pause.
//   pause-holder  arms (recorded as "arm"); the next client whose acquire completes is
//                 paused right then, before it can use the lock (the article's scenario)
//   pause-acquirer arms; the next client whose acquire is still in flight 20 ms after it
//                 was sent (the library is working on it, e.g. waiting or retrying) is
//                 paused then: the GC pause between sending and reading that a lock's
//                 validity check exists for. An acquire that returns sooner is skipped.
//   pause-after-send arms; the next client to send an acquire has it carry the pause: its
//                 lock library (an adapter that can) stops its own thread right after it
//                 sent the lock commands, before it reads a reply — the same GC pause, at
//                 the exact point. Recorded "pause" as the acquire is sent and "resume"
//                 when it comes back.
//   pause-client  a random client node
//   pause-server  a random server node
//   freeze-client, freeze-server: the whole node frozen instead (NodeProcesses::freeze,
//                 docker pause), every process at once and no signal to see
// One pause at a time. A pause whose node is down (killed by the crash family) is recorded
// with "not_applied" and nothing is resumed for it. Thread-safe as nemesis.h says: the
// family's lock is held across a pause (≤ 2 s), describe_active never waits for it.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>

#include "nemesis/fault_status.h"
#include "nemesis/nemesis.h"

namespace fencecheck {

class PauseNemesis : public Nemesis {
 public:
  PauseNemesis(NemesisContext& ctx, const FaultOptions& options) : ctx_(ctx), options_(options) {}
  void start(const std::string& fault, std::mt19937_64& rng) override;
  // "arm" re-arms pause-holder; "pause" of pause-client/-server pauses the same node for
  // the same ms; the holder's "pause" and every "resume" follow by themselves.
  void replay(const std::string& f, const nlohmann::json& value) override;
  void on_acquired(const std::string& client_node) override;
  void on_acquire_sent(const std::string& client_node) override;
  void on_acquire_ended(const std::string& client_node) override;
  std::chrono::milliseconds pause_in_acquire(const std::string& client_node) override;
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
  void pause_locked(const std::string& fault, NodeProcesses& role, const std::string& node,
                    std::chrono::milliseconds ms);
  void arm_locked(const std::string& fault, std::chrono::milliseconds ms);
  // An armed pause-acquirer's target: a client whose acquire has been in flight for the
  // delay by now; empty when none.
  std::string acquirer_due() const;
  void resume_locked();
  void show_locked();

  NemesisContext& ctx_;
  FaultOptions options_;
  mutable std::mutex mu_;  // the family's action lock
  // The lock-aware fault armed ("pause-holder", "pause-acquirer"), or none: read without
  // the lock by the client threads' hooks.
  enum class Armed { kNone, kHolder, kAcquirer, kAfterSend };
  std::atomic<Armed> armed_{Armed::kNone};
  std::chrono::milliseconds armed_ms_{0};
  mutable std::mutex flight_mu_;  // in_flight_: never held across a fault action
  std::map<std::string, TimeSource::Instant> in_flight_;  // client → when its acquire was sent
  std::optional<Paused> paused_;
  std::optional<std::string> inside_;  // the client whose acquire carries a pause-after-send
  std::atomic<bool> inside_set_{false};  // inside_ has a value: read without the lock
  FaultStatus status_;
};

// The registry's factory for the family.
std::unique_ptr<Nemesis> make_pause_nemesis(NemesisContext& ctx, const FaultOptions& options);

}  // namespace fencecheck
