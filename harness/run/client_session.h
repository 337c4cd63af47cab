// WorkerSession: a ClientSession (workloads/workload.h) backed by one client node's worker.
// It records every invoke and completion, renumbers the client after an `info` (Jepsen's
// rule: the old process may still act, so it is retired), and tells the nemesis when an
// acquire succeeded, before the workload's next op.
//
// A client never loops on a broken bench: when its worker died and no fault killed it, or
// when it reached SessionShared::max_info ops of unknown outcome, it stops (running()
// turns false) and tells BenchHealth why. After an info it waits a little before its next
// op. While the nemesis has killed its worker it waits for the new one; a worker killed
// between two ops retires the client's process with the next op (recorded info: it was
// never sent), so that its holds end there and the client goes on as a new process. Used
// by one client thread at a time.
//
// Lock events (nemesis/lock_events.h) go on the run's bus as they happen: acquire-sent just
// before an acquire goes to the worker (with the in-library pause the worker pool had armed,
// if any), acquire-ended as it comes back (before its completion is recorded, so that a
// pause that began while it was in flight is on the record first), acquire-ok after a
// grant's completion is recorded, release once a release is recorded, and every notice of
// the library. Each is published on the client's own thread, before its next op — but for
// notices, which come on the worker handle's notice thread as the library sends them.
//
// Notices (a lock library saying a lock was lost) come from the worker pool's thread:
// notice() records a "lost" one under the process that holds that grant, and lost() then
// tells the workload; every notice is also published on the bus. A notice for a grant whose acquire the session has not recorded yet waits for
// it; one for a process that is retired or no longer holds the lock is dropped (its hold
// ended already). An op whose worker says its lock client broke (an adapter that broke its
// protocol) stops the client and tells BenchHealth why.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "harness/run/bench_health.h"
#include "harness/run/history_recorder.h"
#include "harness/run/worker_pool.h"
#include "nemesis/lock_events.h"
#include "workloads/workload.h"

namespace fencecheck {

// What every session of a run shares. Owned by the runner; outlives the sessions.
struct SessionShared {
  HistoryRecorder& history;
  WorkerPool& workers;
  BenchHealth& health;
  std::atomic<bool>& running;
  std::atomic<std::int64_t>& next_process;
  std::atomic<std::uint64_t>& next_element;
  LockEventBus& events;     // where the lock events go
  const TimeSource& time;   // their instants
  std::chrono::milliseconds ttl;
  std::chrono::milliseconds op_timeout;
  std::uint64_t max_info = 1000;  // ops of unknown outcome one client may have
};

class WorkerSession : public ClientSession {
 public:
  WorkerSession(SessionShared& shared, std::string node, std::int64_t process, std::uint64_t seed)
      : shared_(shared), node_(std::move(node)), process_(process), rng_(seed) {}

  OpResult invoke(OpFn f, const std::string& key, const nlohmann::json& value,
                  std::optional<std::int64_t> fence = std::nullopt) override;
  bool running() const override { return shared_.running.load() && !stopped_; }
  bool lost(const std::string& lock) const override;
  void notice(const WorkerHandle::Notice& n);
  void sleep(std::chrono::milliseconds d) override;
  std::mt19937_64& rng() override { return rng_; }
  std::uint64_t unique_element() override { return shared_.next_element++; }

  bool stopped() const { return stopped_; }  // stopped for good (see above)
  const std::string& node() const { return node_; }
  std::int64_t process() const {
    std::lock_guard lock(mu_);
    return process_;
  }

 private:
  // Retires the process (after an info): whatever it held, it holds no more. Under mu_.
  void retire_locked();
  // After an info: stop if the bench is broken, else wait for a killed worker's successor.
  void after_info(const OpResult& r);
  void stop(const std::string& reason);
  void lost_notice(const WorkerHandle::Notice& n);  // records it under the grant's holder
  void renewed_notice(const WorkerHandle::Notice& n);  // records it when the grant is still held
  void publish(LockEventKind kind, const std::string& key, const std::function<void(LockEvent&)>& fill = {}) const;

  SessionShared& shared_;
  std::string node_;
  mutable std::mutex mu_;  // process_, the maps below, and the order of history lines
  std::int64_t process_;
  std::map<std::string, std::string> held_;                  // lock → lease of this process's grant
  std::map<std::string, WorkerHandle::Notice> early_;        // lease → a notice before its acquire's ok
  std::set<std::string> told_lost_;                          // locks the library said were lost
  std::mt19937_64 rng_;
  std::uint64_t infos_ = 0;
  std::uint64_t generation_ = 0;  // of the worker the last op went to; 0 after an info
  std::atomic<bool> stopped_{false};
};

}  // namespace fencecheck
