#include "harness/run/client_session.h"

#include <thread>

#include "ops/ops.h"

namespace fencecheck {

using std::chrono::milliseconds;

OpResult WorkerSession::invoke(OpFn f, const std::string& key, const nlohmann::json& value,
                               std::optional<std::int64_t> fence) {
  // A killed worker's successor is started by the nemesis; ops wait for it.
  std::uint64_t generation = 0;
  std::shared_ptr<WorkerHandle> worker = shared_.workers.handle(node_, &generation);
  while (!worker && running()) {
    std::this_thread::sleep_for(milliseconds(10));
    worker = shared_.workers.handle(node_, &generation);
  }
  if (!worker) return OpResult{OpType::kFail, nullptr, "the test is ending"};  // nothing sent
  std::unique_lock lock(mu_);
  if (generation_ != 0 && generation != generation_) {
    // The process this client was died with its worker: whatever it held, it holds no more.
    shared_.history.record(process_, OpType::kInvoke, f, key, value, node_);
    OpResult gone{OpType::kInfo, completion_value(f, OpType::kInfo, value, nullptr),
                  "the client's worker was killed by the nemesis before this op; it was never sent"};
    shared_.history.record(process_, gone.type, f, key, gone.value, node_, gone.error);
    retire_locked();
    return gone;
  }
  generation_ = generation;
  if (f == OpFn::kRelease) held_.erase(key);  // the hold ends at the release's invoke
  shared_.history.record(process_, OpType::kInvoke, f, key, value, node_);
  lock.unlock();
  milliseconds pause_inside(0);
  if (f == OpFn::kAcquire) {
    pause_inside = shared_.workers.take_pause_inside();
    publish(LockEventKind::kAcquireSent, key, [&](LockEvent& e) { e.pause_inside = pause_inside; });
  }
  WorkerHandle::Completion c = worker->invoke(f, key, value, shared_.ttl, shared_.op_timeout, fence, pause_inside);
  if (f == OpFn::kAcquire) {
    publish(LockEventKind::kAcquireEnded, key, [&](LockEvent& e) {
      if (c.paused_after_send) e.paused_inside = c.paused_after_send->count() > 0;
    });
  }
  OpResult r{c.type, completion_value(f, c.type, value, c.ok_value), c.error};
  lock.lock();
  shared_.history.record(process_, r.type, f, key, r.value, node_, r.error, c.not_sent);
  if (r.type == OpType::kOk && f == OpFn::kAcquire) {
    told_lost_.erase(key);
    held_[key] = c.lease;
    // Any other early notice was for a grant this session never saw granted.
    auto early = early_.find(c.lease);
    std::optional<WorkerHandle::Notice> now_due;
    if (early != early_.end()) now_due = early->second;
    early_.clear();
    if (now_due) {
      lock.unlock();
      lost_notice(*now_due);
      lock.lock();
    }
  }
  if (r.type == OpType::kInfo) retire_locked();
  lock.unlock();
  if (!c.broken.empty()) {
    stop(c.broken);
    return r;
  }
  if (r.type == OpType::kInfo) after_info(r);
  if (r.type == OpType::kOk && f == OpFn::kAcquire) {
    publish(LockEventKind::kAcquireOk, key);
  } else if (f == OpFn::kRelease) {
    publish(LockEventKind::kRelease, key);
  }
  return r;
}

void WorkerSession::publish(LockEventKind kind, const std::string& key,
                           const std::function<void(LockEvent&)>& fill) const {
  LockEvent e{kind, node_, key, shared_.time.now()};
  if (fill) fill(e);
  shared_.events.publish(e);
}

void WorkerSession::retire_locked() {
  process_ = shared_.next_process++;
  generation_ = 0;
  held_.clear();
  early_.clear();
  told_lost_.clear();
}

void WorkerSession::notice(const WorkerHandle::Notice& n) {
  publish(LockEventKind::kNotice, n.key, [&](LockEvent& e) {
    e.notice = n.f;
    e.reason = n.reason;
  });
  if (n.f == "lost") lost_notice(n);
  if (n.f == "renewed") renewed_notice(n);
}

void WorkerSession::renewed_notice(const WorkerHandle::Notice& n) {
  std::lock_guard lock(mu_);
  auto held = held_.find(n.key);
  // A renewal of a grant this process no longer holds (released, lost, retired) promises
  // it nothing: not recorded.
  if (held == held_.end() || held->second != n.lease) return;
  shared_.history.record(process_, OpType::kNotice, OpFn::kRenewed, n.key, {{"valid_ms", n.ms.count()}}, node_);
}

void WorkerSession::lost_notice(const WorkerHandle::Notice& n) {
  std::lock_guard lock(mu_);
  auto held = held_.find(n.key);
  if (held != held_.end() && held->second == n.lease) {
    shared_.history.record(process_, OpType::kNotice, OpFn::kLost, n.key, {{"reason", n.reason}}, node_);
    held_.erase(held);
    told_lost_.insert(n.key);
  } else if (early_.size() < 64) {
    early_[n.lease] = n;  // its acquire's ok may not be recorded yet
  }
}

bool WorkerSession::lost(const std::string& lock) const {
  std::lock_guard guard(mu_);
  return told_lost_.contains(lock);
}

void WorkerSession::after_info(const OpResult& r) {
  shared_.health.op_unknown(node_, r.error);
  if (++infos_ >= shared_.max_info) {
    stop("it reached " + std::to_string(infos_) + " ops of unknown outcome (the cap); the last: " +
         r.error);
    return;
  }
  Process* p = shared_.workers.process(node_);
  if (p != nullptr && !p->alive() && !p->exit_expected()) {
    stopped_ = true;  // one report of the death, not one more for this client
    shared_.health.worker_died(node_, *p, r.error);
    return;
  }
  // An unknown outcome is the exception: never retry in a tight loop.
  sleep(milliseconds(20));
}

void WorkerSession::stop(const std::string& reason) {
  stopped_ = true;
  shared_.health.client_stopped(node_, reason);
}

void WorkerSession::sleep(milliseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (running() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min(d, milliseconds(20)));
  }
}

}  // namespace fencecheck
