#include "nemesis/lock_events.h"

#include <algorithm>

namespace fencecheck {

std::string_view to_string(LockEventKind k) {
  switch (k) {
    case LockEventKind::kAcquireSent:
      return "acquire-sent";
    case LockEventKind::kAcquireOk:
      return "acquire-ok";
    case LockEventKind::kAcquireEnded:
      return "acquire-ended";
    case LockEventKind::kRelease:
      return "release";
    case LockEventKind::kNotice:
      return "notice";
  }
  return "?";
}

LockEventBus::Subscription LockEventBus::subscribe(std::set<LockEventKind> kinds, Subscriber subscriber) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<Entries>(*entries_);
  next->push_back({next_, std::move(kinds), std::move(subscriber)});
  entries_ = std::move(next);
  return next_++;
}

void LockEventBus::unsubscribe(Subscription s) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<Entries>(*entries_);
  std::erase_if(*next, [s](const Entry& e) { return e.id == s; });
  entries_ = std::move(next);
}

std::shared_ptr<const LockEventBus::Entries> LockEventBus::snapshot() const {
  std::lock_guard lock(mu_);
  return entries_;
}

void LockEventBus::publish(const LockEvent& e) const {
  const std::shared_ptr<const Entries> entries = snapshot();
  for (const Entry& entry : *entries) {
    if (entry.kinds.contains(e.kind)) entry.subscriber(e);
  }
}

bool LockEventBus::wanted(LockEventKind kind) const {
  const std::shared_ptr<const Entries> entries = snapshot();
  return std::any_of(entries->begin(), entries->end(), [kind](const Entry& e) { return e.kinds.contains(kind); });
}

}  // namespace fencecheck
