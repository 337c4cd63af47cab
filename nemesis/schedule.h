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
// Planned (--plan, nemesis/plan.h): the steps of a written plan, in order, through each
// family's Nemesis::replay — a PlanCursor says which lines are due; a plan thread applies
// what time makes due, and a client's lock event (the schedule subscribes to acquire-ok and
// release on NemesisContext::events) applies what it fires on that client's own thread,
// before its next op.
//
// Replayed: the nemesis lines of a recorded history (ReplayLine), applied at the same
// offsets from the schedule's construction (the replaying run makes it as its test phase
// begins) through each family's Nemesis::replay — same targets, same parameters.
//
// Threads: start() gives every family its own thread, which steps it every 10 ms, so a
// family that blocks (a restart waiting for a quorum, up to the backend's readiness
// timeout) delays no other family, and nothing the runner calls waits for it:
// describe_active() and acting() never wait for a fault action. heal_now() first
// tells every wait to give up (NemesisContext::ending), then heals all families at once,
// each as soon as its current action ends (a bounded one: a SIGSTOP, an iptables change, a
// readiness probe), so it returns within about a second whatever the families were doing. stop() joins the threads and
// heals. poll() steps every family once on the caller's thread: unit tests drive it with a
// ManualTime and never sleep.
//
// The line a family records for an action the schedule planned carries that plan's instant
// (FaultLog's `planned`): a start at its drawn instant, an end at the fault's own due(), a
// replayed line at its offset — so the history shows how late each came. Lines that follow
// from the action (a kill's "ready" once its servers answer) carry none.
#pragma once

#include <atomic>
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
#include "nemesis/plan_cursor.h"

namespace fencecheck {

// One nemesis line of a recorded history, due `after` the replaying schedule was made.
struct ReplayLine {
  TimeSource::Duration after;
  std::string f;
  nlohmann::json value;  // has "fault"
  std::uint64_t line = 0;  // in the recorded history, for messages
};

class NemesisSchedule {
 public:
  // faults: names from fault_registry() (validated by the caller; an unknown one throws
  // std::invalid_argument); empty = no faults. ctx must outlive the schedule.
  NemesisSchedule(std::vector<std::string> faults, std::chrono::milliseconds interval,
                  std::uint64_t seed, NemesisContext& ctx, const FaultOptions& options);
  // Replays `lines` (in time order) instead of drawing; faults names the families to make.
  // A line whose fault is not among them throws std::invalid_argument.
  NemesisSchedule(std::vector<std::string> faults, std::vector<ReplayLine> lines,
                  NemesisContext& ctx, const FaultOptions& options);
  // Runs `plan` (read_plan() checked it) from now on instead of drawing.
  NemesisSchedule(Plan plan, NemesisContext& ctx, const FaultOptions& options);
  ~NemesisSchedule();  // stop()s

  void start();
  void stop();
  void heal_now();
  // One step of every family. Records the first error (see error()) and injects nothing
  // more after it.
  void poll();
  std::vector<std::string> describe_active() const;
  // A plan's steps fired so far and its steps in all; nullopt without a plan. Never waits.
  std::optional<std::pair<std::size_t, std::size_t>> plan_progress() const;
  // Some family's fault is in force, not merely armed (Nemesis::acting). Never waits.
  bool acting() const;
  // Why the schedule stopped injecting faults early — the error and the faults in force
  // then; empty when it did not.
  std::string error() const;

 private:
  class FamilyLog;
  struct Family {
    std::string name;
    std::unique_ptr<FamilyLog> log;      // ctx.log of this family: adds the planned instant
    std::unique_ptr<NemesisContext> ctx;  // the run's, with log and ending of this family
    std::unique_ptr<Nemesis> nemesis;
    std::vector<std::string> faults;  // the configured ones of this family
    std::mt19937_64 rng;
    bool in_force = false;
    bool self_timed = false;          // of the fault in force
    TimeSource::Instant due;          // next start (waiting) or heal (in force)
    std::vector<ReplayLine> replay;   // this family's lines
    std::size_t next_line = 0;
    std::mutex step_mu;               // one step or heal of this family at a time
    std::thread thread;
  };
  NemesisSchedule(std::vector<std::string> faults, NemesisContext& ctx, const FaultOptions& options,
                  std::uint64_t seed);
  TimeSource::Duration window(Family& f);
  void step(Family& f);
  void step_drawn(Family& f, TimeSource::Instant now);
  void step_replay(Family& f);
  Family& family_of_fault(const std::string& fault);
  void loop(Family& f);
  void fail(const std::string& what);
  void plan_loop();
  // Applies a batch of planned lines through their families, in order; then applied().
  void apply_planned(std::vector<PlannedLine> lines);
  // A client's acquire completed ok, or its release came back: a planned step waiting for
  // it is applied now, on the caller's thread (bounded as the step's fault action is).
  void on_lock_event(const LockEvent& e);

  std::chrono::milliseconds interval_{0};
  NemesisContext& ctx_;
  std::map<std::string, std::unique_ptr<Family>> families_;  // by family name
  bool replaying_ = false;
  std::unique_ptr<PlanCursor> plan_;  // --plan; null otherwise
  std::thread plan_thread_;
  TimeSource::Instant replay_base_{};  // when the replaying schedule was made
  std::atomic<bool> ending_{false};    // heal_now() or stop(): waits give up
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool healed_ = false;  // heal_now() or stop(): inject nothing more
  std::string error_;
  std::unique_ptr<LockEventSubscriptions> plan_events_;  // --plan's: acquire-ok, release
};

}  // namespace fencecheck
