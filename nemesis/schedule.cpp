#include "nemesis/schedule.h"

#include <stdexcept>

namespace fencecheck {

NemesisSchedule::NemesisSchedule(std::vector<std::string> faults, std::chrono::milliseconds interval,
                                 std::uint64_t seed, NemesisEnv& env, const NemesisOptions& options)
    : faults_(std::move(faults)), interval_(interval), rng_(seed) {
  for (const auto& name : faults_) {
    const FaultInfo* f = find_fault(name);
    if (f == nullptr) throw std::invalid_argument("unknown fault \"" + name + "\"");
    auto& n = by_kind_[f->nemesis];
    if (!n) n = make_nemesis(f->nemesis, env, options);
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
  for (auto& [kind, n] : by_kind_) {
    try {
      n->heal();
    } catch (const std::exception& e) {  // stop() runs in destructors: keep the reason instead
      std::lock_guard lock(mu_);
      if (error_.empty()) error_ = std::string("heal: ") + e.what();
    }
  }
}

void NemesisSchedule::on_acquired(const std::string& client_node) {
  for (auto& [kind, n] : by_kind_) n->on_acquired(client_node);
}

std::vector<std::string> NemesisSchedule::describe_active() const {
  std::vector<std::string> all;
  for (const auto& [kind, n] : by_kind_) {
    for (auto& d : n->describe_active()) all.push_back(std::move(d));
  }
  return all;
}

std::string NemesisSchedule::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

bool NemesisSchedule::any_active() const {
  for (const auto& [kind, n] : by_kind_) {
    if (n->active()) return true;
  }
  return false;
}

void NemesisSchedule::loop() {
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kTick{10};
  auto next = Clock::now() + interval_;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, kTick, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    try {
      for (auto& [kind, n] : by_kind_) n->tick();
      if (Clock::now() >= next && !any_active()) {
        const std::string& fault = faults_[rng_() % faults_.size()];
        by_fault_.at(fault)->start(fault, rng_);
        next = Clock::now() + interval_;
      }
    } catch (const std::exception& e) {
      // A fault that cannot be injected ends the schedule; the runner reports it.
      lock.lock();
      error_ = e.what();
      break;
    }
    lock.lock();
  }
}

}  // namespace fencecheck
