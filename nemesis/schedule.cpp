#include "nemesis/schedule.h"

#include <stdexcept>

namespace fencecheck {

NemesisSchedule::NemesisSchedule(std::vector<std::string> faults, std::chrono::milliseconds interval,
                                 std::uint64_t seed, NemesisContext& ctx, const FaultOptions& options)
    : faults_(std::move(faults)), interval_(interval), ctx_(ctx), rng_(seed),
      next_(ctx.time.now() + interval) {
  for (const auto& name : faults_) {
    const FaultInfo* f = find_fault(name);
    if (f == nullptr) throw std::invalid_argument("unknown fault \"" + name + "\"");
    auto& n = by_family_[f->family];
    if (!n) n = f->make(ctx_, options);
    by_fault_[name] = n.get();
  }
}

NemesisSchedule::~NemesisSchedule() { stop(); }

void NemesisSchedule::start() {
  if (faults_.empty() || thread_.joinable()) return;
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
  for (auto& [family, n] : by_family_) {
    try {
      n->heal();
    } catch (const std::exception& e) {  // runs in destructors: keep the reason instead
      std::lock_guard lock(mu_);
      if (error_.empty()) error_ = std::string("heal: ") + e.what();
    }
  }
}

void NemesisSchedule::poll() {
  std::lock_guard polling(poll_mu_);
  {
    std::lock_guard lock(mu_);
    if (healed_ || !error_.empty()) return;
  }
  try {
    for (auto& [family, n] : by_family_) n->tick();
    if (!faults_.empty() && ctx_.time.now() >= next_ && !any_active()) {
      const std::string& fault = faults_[rng_() % faults_.size()];
      by_fault_.at(fault)->start(fault, rng_);
      next_ = ctx_.time.now() + interval_;
    }
  } catch (const std::exception& e) {
    // A fault that cannot be injected ends the schedule; the runner reports it.
    std::lock_guard lock(mu_);
    error_ = e.what();
  }
}

void NemesisSchedule::on_acquired(const std::string& client_node) {
  for (auto& [family, n] : by_family_) n->on_acquired(client_node);
}

std::vector<std::string> NemesisSchedule::describe_active() const {
  std::vector<std::string> all;
  for (const auto& [family, n] : by_family_) {
    for (auto& d : n->describe_active()) all.push_back(std::move(d));
  }
  return all;
}

std::string NemesisSchedule::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

bool NemesisSchedule::any_active() const {
  for (const auto& [family, n] : by_family_) {
    if (n->active()) return true;
  }
  return false;
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
