// NemesisSchedule: the seeded timetable of faults. Every `interval`, when no fault is in
// force, it starts one fault drawn (with its own seeded rng) from the configured list; it
// ticks the nemeses so that timed faults end on time. With the same seed and list the
// sequence of faults is the same (their exact instants depend on the clients).
//
// Owns one Nemesis per kind named by the faults. start() runs the timetable on its own
// thread; stop() halts it and heals every fault (every paused process resumed) before it
// returns. on_acquired() may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nemesis/nemesis.h"

namespace fencecheck {

class NemesisSchedule {
 public:
  // faults: names from fault_registry() (validated by the caller); empty = no faults.
  NemesisSchedule(std::vector<std::string> faults, std::chrono::milliseconds interval,
                  std::uint64_t seed, NemesisEnv& env, const NemesisOptions& options);
  ~NemesisSchedule();  // stop()s

  void start();
  void stop();
  void on_acquired(const std::string& client_node);
  std::vector<std::string> describe_active() const;
  // Why the schedule stopped injecting faults early; empty when it did not.
  std::string error() const;

 private:
  void loop();
  bool any_active() const;

  std::vector<std::string> faults_;
  std::chrono::milliseconds interval_;
  std::mt19937_64 rng_;
  std::map<std::string, std::unique_ptr<Nemesis>> by_kind_;  // "pause" → PauseNemesis
  std::map<std::string, Nemesis*> by_fault_;                 // "pause-holder" → PauseNemesis
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace fencecheck
