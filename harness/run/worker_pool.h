// WorkerPool: the client workers of a run — one `fencecheck worker` process per client
// node, driven over a Unix socket in the run's private control directory — and the
// NodeProcesses capability the nemesis uses on client nodes.
//
// start() spawns a node's worker, waits for its socket and sets it up (lock client of the
// backend, stub of the resource); kill() crashes it (an expected exit) and start() brings
// up a fresh one. Sessions look the current worker up by node for every op, so a restarted
// worker is used at once. Thread-safe: pause, kill and stop of one node are serialized (a
// lock per node), so that a pause never lands on a worker being killed and is reported as
// done; the pool's own lock, which every op's lookup takes, is held only to read or change
// the tables — never across a spawn (an upload under ssh, a worker joining a frozen
// container) or a signal, so one client's restart never stalls another client's ops. The
// Runtime must outlive the pool.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/control/worker_handle.h"
#include "nemesis/nemesis.h"
#include "platform/node_locks.h"
#include "platform/runtime.h"

namespace fencecheck {

struct WorkerSetup {
  std::filesystem::path exe;          // the fencecheck binary
  std::filesystem::path control_dir;  // 0700 directory for the sockets
  std::filesystem::path nodes_dir;    // logs go to nodes_dir/<node>/worker.log
  std::string backend;
  nlohmann::json client_config;
  std::string resource_address;
  // The lock client; an adapter's log goes to nodes_dir/<node>/adapter.log.
  WorkerHandle::ClientChoice client;
  CancelCheck interrupted;  // Ctrl-C: ends a worker's setup early (Interrupted)
};

// Where the notices of every worker go: the node and what its library said.
using NoticeSink = std::function<void(const std::string& node, const WorkerHandle::Notice& notice)>;

class WorkerPool final : public NodeProcesses {
 public:
  WorkerPool(Runtime& runtime, WorkerSetup setup, std::vector<std::string> nodes);
  ~WorkerPool() override;

  // Starts every node's worker, all at once: spawns them one by one, then waits for them
  // together (up to 10 s, plus a setup of up to 20 s). Throws HarnessError naming a node
  // that failed, with its log tail (the others' waits then end at once), or Interrupted.
  void start_all();
  // The in-library pause armed by arm_pause_inside(), taken by the acquire about to be sent
  // (0: none). Called by a session just before it sends an acquire; never waits.
  std::chrono::milliseconds take_pause_inside();
  // The node's current worker; nullptr while it is down (killed, not started again).
  // generation: how many workers this node has had (1 for the first), so that a session
  // notices that its worker was replaced between two ops.
  std::shared_ptr<WorkerHandle> handle(const std::string& node, std::uint64_t* generation = nullptr) const;
  Process* process(const std::string& node) const;  // nullptr while down
  // Asks every worker to exit, all at once (up to timeout in all); the Runtime stops what
  // remains.
  void shutdown_all(std::chrono::milliseconds timeout);
  // From now on, every worker's notices (a lock library saying a lock was lost) go to
  // sink, on the worker handle's thread; before, they are dropped. Thread-safe.
  void set_notice_sink(NoticeSink sink);

  // NodeProcesses
  std::vector<std::string> nodes() const override { return nodes_; }
  bool pause(const std::string& node, const Deadline& deadline) override;
  void resume(const std::string& node, const Deadline& deadline) override;
  void freeze(const std::string& node, const Deadline& deadline) override { runtime_.freeze(node, deadline); }
  void thaw(const std::string& node, const Deadline& deadline) override { runtime_.thaw(node, deadline); }
  bool kill(const std::string& node, const Deadline& deadline) override;
  // Asks the worker to exit, then stops it.
  bool stop(const std::string& node, const Deadline& deadline) override;
  // Spawns the node's worker (no-op while it has one, running or starting).
  void launch(const std::string& node, const Deadline& deadline) override;
  // Connects to the launched worker and sets it up: kReady, or kGaveUp when the deadline's
  // cancel check (or the runtime's interrupt check) said so. A worker is the bench's own:
  // one that does not answer within 10 s (or by the deadline) throws HarnessError with its
  // log tail instead of kTimedOut.
  Readiness await_ready(const std::string& node, const Deadline& deadline) override;
  void arm_pause_inside(std::chrono::milliseconds ms) override { pause_inside_ms_ = ms.count(); }
  // launch() and await_ready() for setup: throws HarnessError, or Interrupted on Ctrl-C.
  void start(const std::string& node);

 private:
  struct Worker {
    Process* process = nullptr;
    std::shared_ptr<WorkerHandle> handle;
    std::uint64_t generation = 0;
  };
  Worker current(const std::string& node) const;
  Worker take(const std::string& node);  // forgets the node's worker

  Runtime& runtime_;
  const WorkerSetup setup_;
  const std::vector<std::string> nodes_;
  mutable std::mutex mu_;  // workers_, launched_, starting_, generations_: held only briefly
  std::map<std::string, Worker> workers_;   // set up and in use
  std::map<std::string, Worker> launched_;  // spawned, not yet set up
  SpawnOutsideLock starting_;               // being spawned (outside mu_)
  std::map<std::string, std::uint64_t> generations_;
  NodeLocks acting_;  // a node's pause, kill and stop one at a time (bounded)
  std::shared_ptr<NoticeSink> sink_;  // under mu_
  std::atomic<std::int64_t> pause_inside_ms_{0};  // arm_pause_inside, until an acquire takes it
};

}  // namespace fencecheck
