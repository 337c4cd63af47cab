#include "nemesis/fault_registry.h"
#include "nemesis/schedule.h"

#include <algorithm>
#include <stdexcept>

namespace fencecheck {

// The FaultLog a family's nemesis sees: the run's, plus the instant the schedule planned
// for what the family's own thread is doing now. The plan belongs to the first line the
// action records (the pause, the cut, the kill); what follows from it (a kill's "ready"
// once the servers answer) has no plan unless the nemesis gives one. Lines recorded by
// other threads (a lock-aware fault fired by a client's acquire) have no plan either.
class NemesisSchedule::FamilyLog final : public FaultLog {
 public:
  explicit FamilyLog(FaultLog& run_log) : run_log_(run_log) {}
  void record(const std::string& f, const nlohmann::json& value,
              std::optional<TimeSource::Instant> planned) override {
    {
      std::lock_guard lock(mu_);
      if (planner_ == std::this_thread::get_id()) {
        if (!planned) planned = planned_;
        planned_.reset();
      }
    }
    run_log_.record(f, value, planned);
  }
  // The next line this thread records was planned for `at`.
  void plan(std::optional<TimeSource::Instant> at) {
    std::lock_guard lock(mu_);
    planner_ = std::this_thread::get_id();
    planned_ = at;
  }

 private:
  FaultLog& run_log_;
  std::mutex mu_;
  std::thread::id planner_;
  std::optional<TimeSource::Instant> planned_;
};

NemesisSchedule::NemesisSchedule(std::vector<std::string> faults, NemesisContext& ctx,
                                 const FaultOptions& options, std::uint64_t seed)
    : ctx_(ctx) {
  std::uint64_t n = 0;
  for (const auto& name : faults) {
    const FaultInfo* info = find_fault(name);
    if (info == nullptr) throw std::invalid_argument("unknown fault \"" + name + "\"");
    std::unique_ptr<Family>& family = families_[info->family];
    if (!family) {
      family = std::make_unique<Family>();
      family->name = info->family;
      family->log = std::make_unique<FamilyLog>(ctx_.log);
      family->ctx = std::make_unique<NemesisContext>(NemesisContext{
          ctx_.net, ctx_.servers, ctx_.clients, ctx_.clocks, *family->log, ctx_.time, ctx_.events,
          [this] { return ending_.load() || ctx_.ending(); }, ctx_.interrupted});
      family->nemesis = info->make(*family->ctx, options);
      family->rng.seed(seed + 0x9e3779b97f4a7c15ULL * ++n);
    }
    family->faults.push_back(name);
  }
}

NemesisSchedule::NemesisSchedule(std::vector<std::string> faults, std::chrono::milliseconds interval,
                                 std::uint64_t seed, NemesisContext& ctx, const FaultOptions& options)
    : NemesisSchedule(std::move(faults), ctx, options, seed) {
  interval_ = interval;
  TimeSource::Instant now = ctx_.time.now();
  for (auto& [name, f] : families_) f->due = now + window(*f);
}

NemesisSchedule::NemesisSchedule(std::vector<std::string> faults, std::vector<ReplayLine> lines,
                                 NemesisContext& ctx, const FaultOptions& options)
    : NemesisSchedule(std::move(faults), ctx, options, 0) {
  for (auto& line : lines) {
    Family& f = family_of_fault(line.value.at("fault").get<std::string>());
    f.replay.push_back(std::move(line));
  }
  replaying_ = true;
  replay_base_ = ctx_.time.now();
}

NemesisSchedule::NemesisSchedule(Plan plan, NemesisContext& ctx, const FaultOptions& options)
    : NemesisSchedule(plan.faults, ctx, options, 0) {
  plan_ = std::make_unique<PlanCursor>(std::move(plan), ctx_.time.now());
  plan_events_ = std::make_unique<LockEventSubscriptions>(ctx_.events);
  plan_events_->add({std::begin(kPlanEvents), std::end(kPlanEvents)}, [this](const LockEvent& e) { on_lock_event(e); });
}

NemesisSchedule::~NemesisSchedule() {
  stop();
  plan_events_.reset();  // before the families and the plan they read
}

TimeSource::Duration NemesisSchedule::window(Family& f) {
  auto twice = std::chrono::duration_cast<TimeSource::Duration>(2 * interval_).count();
  return TimeSource::Duration(twice > 0 ? static_cast<TimeSource::Duration::rep>(f.rng() % twice) : 0);
}

NemesisSchedule::Family& NemesisSchedule::family_of_fault(const std::string& fault) {
  const FaultInfo* info = find_fault(fault);
  auto it = info ? families_.find(info->family) : families_.end();
  if (it == families_.end()) {
    throw std::invalid_argument("fault \"" + fault + "\" is not among this run's faults");
  }
  return *it->second;
}

void NemesisSchedule::start() {
  for (auto& [name, f] : families_) {
    if (!f->thread.joinable()) f->thread = std::thread([this, fam = f.get()] { loop(*fam); });
  }
  if (plan_ && !plan_thread_.joinable()) plan_thread_ = std::thread([this] { plan_loop(); });
}

void NemesisSchedule::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  ending_ = true;
  cv_.notify_all();
  for (auto& [name, f] : families_) {
    if (f->thread.joinable()) f->thread.join();
  }
  if (plan_thread_.joinable()) plan_thread_.join();
  heal_now();
}

void NemesisSchedule::heal_now() {
  ending_ = true;  // first: a restart waiting for readiness gives up and frees its family
  {
    std::lock_guard lock(mu_);
    healed_ = true;
  }
  // Every family at once: the heal takes as long as the slowest family's, not their sum
  // (a cut to undo, a restart's last probe to finish).
  std::vector<std::thread> healers;
  for (auto& [name, family] : families_) {
    healers.emplace_back([this, &name, f = family.get()] {
      std::lock_guard stepping(f->step_mu);
      try {
        f->log->plan(std::nullopt);
        f->nemesis->heal();
        f->in_force = false;
      } catch (const std::exception& e) {  // runs in destructors: keep the reason instead
        std::lock_guard lock(mu_);
        if (error_.empty()) error_ = "heal of the " + name + " family: " + std::string(e.what());
      }
    });
  }
  for (auto& t : healers) t.join();
}

void NemesisSchedule::step_drawn(Family& f, TimeSource::Instant now) {
  if (f.in_force) {
    bool ended = !f.nemesis->active();
    if (!ended && !f.self_timed && now >= f.due) {
      f.log->plan(f.due);
      f.nemesis->heal();
      ended = true;
    }
    if (ended) {
      f.in_force = false;
      f.due = now + window(f);  // the recovery window
    }
    return;
  }
  if (now < f.due) return;
  const std::string& fault = f.faults[f.rng() % f.faults.size()];
  f.log->plan(f.due);
  f.nemesis->start(fault, f.rng);
  f.in_force = true;
  f.self_timed = find_fault(fault)->self_timed;
  f.due = now + window(f);  // when an open-ended fault is healed
}

void NemesisSchedule::step_replay(Family& f) {
  TimeSource::Instant now = ctx_.time.now();
  for (; f.next_line < f.replay.size() && replay_base_ + f.replay[f.next_line].after <= now; ++f.next_line) {
    const ReplayLine& line = f.replay[f.next_line];
    f.log->plan(replay_base_ + line.after);
    f.nemesis->replay(line.f, line.value);
  }
}

void NemesisSchedule::step(Family& f) {
  std::lock_guard stepping(f.step_mu);
  {
    std::lock_guard lock(mu_);
    if (healed_ || !error_.empty()) return;
  }
  try {
    f.log->plan(f.nemesis->due());
    f.nemesis->tick();
    if (replaying_) {
      step_replay(f);
    } else if (!plan_) {
      step_drawn(f, ctx_.time.now());
    }
    f.log->plan(std::nullopt);
  } catch (const std::exception& e) {
    f.log->plan(std::nullopt);
    fail("the " + f.name + " family: " + e.what());
  }
}

// A fault that cannot be injected ends the schedule; the runner reports it, with what the
// other families had in force then (a server that would not start may have needed a node
// that another family had paused or cut off).
void NemesisSchedule::fail(const std::string& what) {
  // An action Ctrl-C cut short failed because of it: the run is interrupted, not broken.
  if (ctx_.interrupted()) return;
  std::string in_force;
  for (const auto& d : describe_active()) in_force += (in_force.empty() ? "" : ", ") + d;
  std::lock_guard lock(mu_);
  if (!error_.empty()) return;
  error_ = what + "\n(faults in force then: " + (in_force.empty() ? "none" : in_force) + ")";
}

void NemesisSchedule::poll() {
  for (auto& [name, f] : families_) step(*f);
  if (plan_) apply_planned(plan_->due(ctx_.time.now()));
}

void NemesisSchedule::apply_planned(std::vector<PlannedLine> lines) {
  // Each batch, then what lock events that came meanwhile fired (PlanCursor::applied).
  while (!lines.empty()) {
    for (const PlannedLine& line : lines) {
      Family* f = nullptr;
      try {  // never out of here: this runs on the plan thread and on clients' threads
        f = &family_of_fault(line.value.at("fault").get<std::string>());
        std::lock_guard stepping(f->step_mu);
        {
          std::lock_guard lock(mu_);
          if (healed_ || !error_.empty()) break;
        }
        f->log->plan(line.planned);
        f->nemesis->replay(line.f, line.value);
        f->log->plan(std::nullopt);
      } catch (const std::exception& e) {
        if (f != nullptr) f->log->plan(std::nullopt);
        fail("plan step " + std::to_string(line.step) + " (" + line.f + "): " + e.what());
        break;
      }
    }
    lines = plan_->applied(ctx_.time.now());
  }
}

std::optional<std::pair<std::size_t, std::size_t>> NemesisSchedule::plan_progress() const {
  if (!plan_) return std::nullopt;
  return std::pair(plan_->steps_fired(), plan_->steps());
}

void NemesisSchedule::on_lock_event(const LockEvent& e) {
  if (!plan_ || !plan_->waiting_for_event()) return;  // the common case: no lock taken
  apply_planned(plan_->on_event(e, ctx_.time.now()));
}

void NemesisSchedule::plan_loop() {
  static constexpr std::chrono::milliseconds kTick{5};
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, kTick, [this] { return stopping_; });
    if (stopping_ || healed_) break;
    lock.unlock();
    apply_planned(plan_->due(ctx_.time.now()));
    lock.lock();
  }
}

bool NemesisSchedule::acting() const {
  for (const auto& [name, f] : families_) {
    if (f->nemesis->acting()) return true;
  }
  return false;
}

std::vector<std::string> NemesisSchedule::describe_active() const {
  std::vector<std::string> all;
  if (std::string next = plan_ ? plan_->describe() : ""; !next.empty()) all.push_back(std::move(next));
  for (const auto& [name, f] : families_) {
    for (auto& d : f->nemesis->describe_active()) all.push_back(std::move(d));
  }
  return all;
}

std::string NemesisSchedule::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void NemesisSchedule::loop(Family& f) {
  static constexpr std::chrono::milliseconds kTick{10};
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, kTick, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    step(f);
    lock.lock();
  }
}

}  // namespace fencecheck
