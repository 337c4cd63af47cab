// MemoryNemesis (family "memory"): the lock service's cache runs out of memory and evicts.
//   memory-pressure  fills a random server's memory with filler items for --pause-ms
//                    (NodeProcesses::press_memory, from inside the server's network, on a
//                    thread of the family's own), so that its LRU evicts items — held lock
//                    keys among them — while the clients' ops go on. Recorded
//                    "memory-pressure" (targets, ms) when it begins and "memory-relieved"
//                    when it ends, with what the fill did: filler items `stored` and
//                    `refused`, and the server's own count of `evictions` meanwhile (null
//                    when it could not say); a server down or paused is recorded with
//                    "not_applied", as is a fill a vanishing server cut short ("ended_early").
// Needs a backend whose servers evict (Capability::kEvictsKeys, with the run's backend
// options: memcached with evict=on) and that the run runs; refused elsewhere.
// Thread-safe as nemesis.h says: start/tick/heal/replay come from the family's thread;
// describe_active reads FaultStatus and never waits for the fill. The fill thread is
// joined by tick() once --pause-ms is over, by heal() (which ends it early) and by the
// destructor; each join waits at most one exchange with the server (≤ 2 s,
// LockServer::press_memory) past the fill's deadline.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "nemesis/fault_status.h"
#include "nemesis/nemesis.h"

namespace fencecheck {

class MemoryNemesis : public Nemesis {
 public:
  MemoryNemesis(NemesisContext& ctx, const FaultOptions& options);
  ~MemoryNemesis() override;
  void start(const std::string& fault, std::mt19937_64& rng) override;
  // "memory-pressure" fills the same node for the same ms; "memory-relieved" follows.
  void replay(const std::string& f, const nlohmann::json& value) override;
  void tick() override;
  std::optional<TimeSource::Instant> due() const override;
  bool active() const override { return status_.any(); }
  std::vector<std::string> describe_active() const override { return status_.shown(); }
  void heal() override;

 private:
  struct Fill {
    std::string node;
    std::chrono::milliseconds ms{0};
    TimeSource::Instant until;
    std::thread thread;
    // Written by the thread, read once it is joined.
    std::optional<MemoryPressure> result;
    std::string failure;  // what press_memory threw
  };
  void press_locked(const std::string& node, std::chrono::milliseconds ms);
  void relieve_locked();

  NemesisContext& ctx_;
  FaultOptions options_;
  mutable std::mutex mu_;  // fill_
  std::optional<Fill> fill_;
  std::atomic<bool> stop_{false};  // heal: the fill ends now
  FaultStatus status_;
};

std::unique_ptr<Nemesis> make_memory_nemesis(NemesisContext& ctx, const FaultOptions& options);

}  // namespace fencecheck
