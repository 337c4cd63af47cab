#include "nemesis/schedule.h"

#include <stdexcept>

namespace fencecheck {

NemesisSchedule::NemesisSchedule(std::vector<std::string> faults, NemesisContext& ctx,
                                 const FaultOptions& options, std::uint64_t seed)
    : ctx_(ctx) {
  std::uint64_t n = 0;
  for (const auto& name : faults) {
    const FaultInfo* f = find_fault(name);
    if (f == nullptr) throw std::invalid_argument("unknown fault \"" + name + "\"");
    Family& family = families_[f->family];
    if (!family.nemesis) {
      family.nemesis = f->make(ctx_, options);
      family.rng.seed(seed + 0x9e3779b97f4a7c15ULL * ++n);
    }
    family.faults.push_back(name);
  }
}

NemesisSchedule::NemesisSchedule(std::vector<std::string> faults, std::chrono::milliseconds interval,
                                 std::uint64_t seed, NemesisContext& ctx, const FaultOptions& options)
    : NemesisSchedule(std::move(faults), ctx, options, seed) {
  interval_ = interval;
  TimeSource::Instant now = ctx_.time.now();
  for (auto& [name, f] : families_) f.due = now + window(f);
}

NemesisSchedule::NemesisSchedule(std::vector<std::string> faults, std::vector<ReplayLine> lines,
                                 NemesisContext& ctx, const FaultOptions& options)
    : NemesisSchedule(std::move(faults), ctx, options, 0) {
  for (const auto& line : lines) family_of_fault(line.value.at("fault").get<std::string>());
  replay_ = std::move(lines);
  replay_base_ = ctx_.time.now();
}

NemesisSchedule::~NemesisSchedule() { stop(); }

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
  return it->second;
}

void NemesisSchedule::start() {
  if (families_.empty() || thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void NemesisSchedule::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  heal_now();
}

void NemesisSchedule::heal_now() {
  std::lock_guard polling(poll_mu_);
  {
    std::lock_guard lock(mu_);
    healed_ = true;
  }
  heal_all();
}

void NemesisSchedule::heal_all() {
  for (auto& [name, f] : families_) {
    try {
      f.nemesis->heal();
      f.in_force = false;
    } catch (const std::exception& e) {  // runs in destructors: keep the reason instead
      std::lock_guard lock(mu_);
      if (error_.empty()) error_ = "heal: " + std::string(e.what());
    }
  }
}

void NemesisSchedule::step_drawn(Family& f, TimeSource::Instant now) {
  if (f.in_force) {
    bool ended = !f.nemesis->active();
    if (!ended && !f.self_timed && now >= f.due) {
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
  f.nemesis->start(fault, f.rng);
  f.in_force = true;
  f.self_timed = find_fault(fault)->self_timed;
  f.due = now + window(f);  // when an open-ended fault is healed
}

void NemesisSchedule::step_replay() {
  const auto& lines = *replay_;
  TimeSource::Instant now = ctx_.time.now();
  for (; next_line_ < lines.size() && replay_base_ + lines[next_line_].after <= now; ++next_line_) {
    const ReplayLine& line = lines[next_line_];
    family_of_fault(line.value.at("fault").get<std::string>()).nemesis->replay(line.f, line.value);
  }
}

void NemesisSchedule::poll() {
  std::lock_guard polling(poll_mu_);
  {
    std::lock_guard lock(mu_);
    if (healed_ || !error_.empty()) return;
  }
  try {
    for (auto& [name, f] : families_) f.nemesis->tick();
    if (replay_) {
      step_replay();
    } else {
      TimeSource::Instant now = ctx_.time.now();
      for (auto& [name, f] : families_) step_drawn(f, now);
    }
  } catch (const std::exception& e) {
    // A fault that cannot be injected ends the schedule; the runner reports it.
    std::lock_guard lock(mu_);
    error_ = e.what();
  }
}

void NemesisSchedule::on_acquired(const std::string& client_node) {
  for (auto& [name, f] : families_) f.nemesis->on_acquired(client_node);
}

std::vector<std::string> NemesisSchedule::describe_active() const {
  std::vector<std::string> all;
  for (const auto& [name, f] : families_) {
    for (auto& d : f.nemesis->describe_active()) all.push_back(std::move(d));
  }
  return all;
}

std::string NemesisSchedule::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void NemesisSchedule::loop() {
  static constexpr std::chrono::milliseconds kTick{10};
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, kTick, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    poll();
    lock.lock();
  }
}

}  // namespace fencecheck
