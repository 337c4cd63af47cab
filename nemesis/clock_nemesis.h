// ClockNemesis (family "clock"): shifts the wall clocks of server nodes (or, with
// --nemesis-targets clients, of client nodes: the workers and their adapters) through the Clocks
// capability (the clock-offset preload library), with Jepsen's ranges
// (jepsen/nemesis/time.clj), every magnitude capped by --clock-max-ms (and a
// bump's at least --clock-min-ms); the servers hit are --nemesis-targets when set:
//   clock-bump    a random non-empty subset of servers jumps by ±1.5^(6+U[0,25)) ms each;
//                 offsets add up until healed (open-ended; heal resets every offset to 0)
//   clock-strobe  a random subset alternates between its offset and offset+delta every
//                 period for a while: delta 2^(2+U[0,16)) ms, period 2^U[0,10) ms (at
//                 least 10 ms, the schedule's tick), duration U[0,32) s; then resets
//   clock-reset   every server's offset, and every client's a fault shifted, back to 0
// Records "clock-bump" / "clock-strobe" with each node's offset, and "clock-reset".
// Thread-safe; its actions are stores into the offset page (after a check that can wait
// up to 2 s for a freshly restarted server's first clock call), and describe_active takes
// the family's lock: at worst it waits that long.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <optional>

#include "nemesis/nemesis.h"

namespace fencecheck {

class ClockNemesis : public Nemesis {
 public:
  ClockNemesis(NemesisContext& ctx, const FaultOptions& options) : ctx_(ctx), options_(options) {}
  void start(const std::string& fault, std::mt19937_64& rng) override;
  void replay(const std::string& f, const nlohmann::json& value) override;
  void tick() override;
  std::optional<TimeSource::Instant> due() const override;
  bool active() const override;
  std::vector<std::string> describe_active() const override;
  void heal() override;

 private:
  struct Strobe {
    std::map<std::string, std::chrono::milliseconds> base;  // offset before the strobe
    std::chrono::milliseconds delta, period;
    TimeSource::Instant next_flip, until;
    bool high = false;
  };
  // The servers a bump or strobe hits: --nemesis-targets, or a random subset.
  std::vector<std::string> targets(std::mt19937_64& rng) const;
  // The servers, then the clients a fault has shifted since the last reset.
  std::vector<std::string> shiftable_nodes() const;
  void note_clients_locked(const std::vector<std::string>& nodes);
  std::chrono::milliseconds capped(double ms) const;
  void bump_locked(const std::map<std::string, std::chrono::milliseconds>& deltas);
  void strobe_locked(const std::vector<std::string>& targets, std::chrono::milliseconds delta,
                     std::chrono::milliseconds period, std::chrono::milliseconds duration);
  void reset_locked(const std::string& fault);

  NemesisContext& ctx_;
  FaultOptions options_;
  mutable std::mutex mu_;
  bool shifted_ = false;  // some offset is not 0
  std::set<std::string> shifted_clients_;
  std::optional<Strobe> strobe_;
};

std::unique_ptr<Nemesis> make_clock_nemesis(NemesisContext& ctx, const FaultOptions& options);

}  // namespace fencecheck
