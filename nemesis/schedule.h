// NemesisSchedule: when faults start and end — Jepsen's shape (jepsen.nemesis.combined).
//
// Drawn: every family of the configured faults runs on its own, concurrently with the
// others, alternating a recovery window and a fault: it waits U[0, 2×interval), starts a
// fault of the family drawn from the configured list, and — unless the fault ends by
// itself (FaultInfo::self_timed) — heals it after another U[0, 2×interval); then the next
// recovery window. Each family draws from its own rng seeded from the run's seed, so the
// same seed and list give the same faults with the same targets (their exact instants
// move only with lock-aware faults, which wait for an acquire).
//
// Replayed: the nemesis lines of a recorded history (ReplayLine), applied at the same
// offsets from the schedule's construction (the replaying run makes it as its test phase
// begins) through each family's Nemesis::replay — same targets, same parameters.
//
// poll() does one step at the context's TimeSource's now: unit tests drive it with a
// ManualTime and never sleep. start() runs poll() on its own thread every 10 ms; stop()
// halts that thread and heals every fault (paused processes resumed, the network healed,
// clocks reset, killed processes started) before it returns; heal_now() heals at once and
// injects nothing more (Ctrl-C, the end of the test). on_acquired() may be called from any
// thread.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nemesis/nemesis.h"

namespace fencecheck {

// One nemesis line of a recorded history, due `after` the replaying schedule was made.
struct ReplayLine {
  TimeSource::Duration after;
  std::string f;
  nlohmann::json value;  // has "fault"
};

class NemesisSchedule {
 public:
  // faults: names from fault_registry() (validated by the caller; an unknown one throws
  // std::invalid_argument); empty = no faults. ctx must outlive the schedule.
  NemesisSchedule(std::vector<std::string> faults, std::chrono::milliseconds interval,
                  std::uint64_t seed, NemesisContext& ctx, const FaultOptions& options);
  // Replays `lines` (in time order) instead of drawing; faults names the families to make.
  NemesisSchedule(std::vector<std::string> faults, std::vector<ReplayLine> lines,
                  NemesisContext& ctx, const FaultOptions& options);
  ~NemesisSchedule();  // stop()s

  void start();
  void stop();
  void heal_now();
  // One step. Records the first error (see error()) and injects nothing more after it.
  void poll();
  void on_acquired(const std::string& client_node);
  std::vector<std::string> describe_active() const;
  // Why the schedule stopped injecting faults early; empty when it did not.
  std::string error() const;

 private:
  struct Family {
    std::unique_ptr<Nemesis> nemesis;
    std::vector<std::string> faults;  // the configured ones of this family
    std::mt19937_64 rng;
    bool in_force = false;
    bool self_timed = false;          // of the fault in force
    TimeSource::Instant due;          // next start (waiting) or heal (in force)
  };
  NemesisSchedule(std::vector<std::string> faults, NemesisContext& ctx, const FaultOptions& options,
                  std::uint64_t seed);
  TimeSource::Duration window(Family& f);
  void step_drawn(Family& f, TimeSource::Instant now);
  void step_replay();
  Family& family_of_fault(const std::string& fault);
  void loop();
  void heal_all();

  std::chrono::milliseconds interval_{0};
  NemesisContext& ctx_;
  std::map<std::string, Family> families_;  // by family name
  std::optional<std::vector<ReplayLine>> replay_;
  TimeSource::Instant replay_base_{};  // when the replaying schedule was made
  std::size_t next_line_ = 0;
  std::mutex poll_mu_;  // one poll or heal at a time
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool healed_ = false;  // heal_now() or stop(): inject nothing more
  std::string error_;
  std::thread thread_;
};

}  // namespace fencecheck
