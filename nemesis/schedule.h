// NemesisSchedule: the seeded timetable of faults. Every `interval`, when no fault is in
// force, it starts one fault drawn (with its own seeded rng) from the configured list; it
// ticks the nemeses so that timed faults end on time. With the same seed and list the
// sequence of faults is the same (their exact instants depend on the clients).
//
// poll() does one step at the context's TimeSource's now: unit tests call it with a
// ManualTime and never sleep. start() runs poll() on its own thread every 10 ms; stop()
// halts that thread and heals every fault (every paused process resumed) before it
// returns; heal_now() heals at once without stopping the thread (Ctrl-C: resume whatever
// is paused first, then wind down). Owns one Nemesis per family named by the faults.
// on_acquired() may be called from any thread.
#pragma once

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
  // faults: names from fault_registry() (validated by the caller; an unknown one throws
  // std::invalid_argument); empty = no faults. ctx must outlive the schedule.
  NemesisSchedule(std::vector<std::string> faults, std::chrono::milliseconds interval,
                  std::uint64_t seed, NemesisContext& ctx, const FaultOptions& options);
  ~NemesisSchedule();  // stop()s

  void start();
  void stop();
  void heal_now();
  // One step: end faults whose time is up, start the next when it is due. Records the
  // first error (see error()) and injects nothing more after it.
  void poll();
  void on_acquired(const std::string& client_node);
  std::vector<std::string> describe_active() const;
  // Why the schedule stopped injecting faults early; empty when it did not.
  std::string error() const;

 private:
  void loop();
  bool any_active() const;
  void heal_all();

  std::vector<std::string> faults_;
  std::chrono::milliseconds interval_;
  NemesisContext& ctx_;
  std::mt19937_64 rng_;
  std::map<std::string, std::unique_ptr<Nemesis>> by_family_;  // "pause" → PauseNemesis
  std::map<std::string, Nemesis*> by_fault_;                   // "pause-holder" → PauseNemesis
  TimeSource::Instant next_;
  std::mutex poll_mu_;  // one poll or heal at a time
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool healed_ = false;  // heal_now() or stop(): inject nothing more
  std::string error_;
  std::thread thread_;
};

}  // namespace fencecheck
