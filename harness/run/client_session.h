// WorkerSession: a ClientSession (workloads/workload.h) backed by one worker process.
// It records every invoke and completion, renumbers the client after an `info` (Jepsen's
// rule: the old process may still act, so it is retired), and tells the nemesis when an
// acquire succeeded, before the workload's next op. Used by one client thread at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <random>
#include <string>

#include "harness/control/worker_handle.h"
#include "harness/run/history_recorder.h"
#include "workloads/workload.h"

namespace fencecheck {

// What every session of a run shares. Owned by the runner; outlives the sessions.
struct SessionShared {
  HistoryRecorder& history;
  std::atomic<bool>& running;
  std::atomic<std::int64_t>& next_process;
  std::atomic<std::uint64_t>& next_element;
  std::function<void(const std::string& node)> on_acquired;
  std::chrono::milliseconds ttl;
  std::chrono::milliseconds op_timeout;
};

class WorkerSession : public ClientSession {
 public:
  WorkerSession(SessionShared& shared, WorkerHandle& worker, std::string node, std::int64_t process,
                std::uint64_t seed)
      : shared_(shared), worker_(worker), node_(std::move(node)), process_(process), rng_(seed) {}

  OpResult invoke(OpFn f, const std::string& key, const nlohmann::json& value) override;
  bool running() const override { return shared_.running.load(); }
  void sleep(std::chrono::milliseconds d) override;
  std::mt19937_64& rng() override { return rng_; }
  std::uint64_t unique_element() override { return shared_.next_element++; }

  const std::string& node() const { return node_; }
  std::int64_t process() const { return process_; }

 private:
  SessionShared& shared_;
  WorkerHandle& worker_;
  std::string node_;
  std::int64_t process_;
  std::mt19937_64 rng_;
};

}  // namespace fencecheck
