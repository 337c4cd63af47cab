// BenchHealth: is the test bench itself sound? A chaos tool is trusted only if a broken
// bench can never read as a safe system, so the controller watches every process it
// started and the flow of ops, and each problem it finds makes the run's verdict at best
// `unknown` (results.h).
//
// Problems: a process (server, worker, resource service) that exited when nothing
// expected it to (the nemesis announces its crashes; stops are expected); a process that
// is stopped (state T) although no fault paused it; a client that had to stop (its worker
// died, or it hit the cap on ops of unknown outcome); no client op succeeding for
// `stall_limit` while no fault was in force. Each problem is one sentence naming what and
// where, with the log tail for a dead process.
//
// poll() is called by the runner's main loop (~10 times a second); client threads call
// client_stopped(). Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run/history_recorder.h"
#include "platform/runtime.h"

namespace fencecheck {

struct HealthOptions {
  std::chrono::milliseconds stall_limit{10000};  // no ok op for this long, no fault in force
};

class BenchHealth {
 public:
  BenchHealth(const Runtime& runtime, const HistoryRecorder& history, HealthOptions options);

  // Looks at every process and at the last ok op. fault_in_force: the nemesis has a fault
  // in force now (its time does not count as a stall; an armed one's does). Returns the problems found
  // by this poll (each is reported once).
  std::vector<std::string> poll(bool fault_in_force);
  // An op of `node` ended in info for `error`: the stall problem quotes the last one.
  void op_unknown(const std::string& node, const std::string& error);
  // A client stopped issuing ops for `reason`.
  void client_stopped(const std::string& node, const std::string& reason);
  // The client on `node` stopped because its worker died unprompted: one problem for the
  // death — the one poll() reports too, whichever of the two sees it first — naming the
  // client's last op. The next poll() returns it, so the run ends as it would have had the
  // poll found the death itself.
  void worker_died(const std::string& node, Process& worker, const std::string& last_error);

  // Ends the watch at `end` (ns since t0): a test in which no client op succeeded at all
  // is a problem; one in which most ops never reached the service or ended unknown gets a
  // warning (a refused acquire is the lock working, not a failure of the bench).
  void finish(Nanos end);

  bool sound() const;
  std::vector<std::string> problems() const;
  // The "health" block of results.json: problems, warnings, processes that died, ops per
  // outcome, longest time without an ok op. Call after finish().
  nlohmann::json to_json() const;

 private:
  void add_locked(std::string problem);
  std::string describe_death(Process& p) const;

  const Runtime& runtime_;
  const HistoryRecorder& history_;
  const HealthOptions options_;
  mutable std::mutex mu_;
  std::vector<std::string> problems_;
  std::vector<std::string> warnings_;
  Nanos end_ = 0;
  nlohmann::json died_ = nlohmann::json::array();
  std::set<const Process*> reported_;
  std::map<const Process*, int> stopped_polls_;  // consecutive polls seen stopped, unpaused
  // Start of the time that counts as a stall: made once setup is done, so a slow setup (a
  // real host over ssh takes seconds) never counts.
  Nanos stall_from_ = 0;
  bool stall_reported_ = false;
  std::vector<std::string> unpolled_;  // deaths worker_died found, for the next poll to return
  std::string last_unknown_;           // "on c1: <error>" of the last op of unknown outcome
};

}  // namespace fencecheck
