// PartitionNemesis (family "partition"): cuts the network with iptables through the Net
// capability, Jepsen's shapes over the server and client nodes (the resource node keeps
// every link: faults hit the lock service, not the protected data):
//   partition-halves           two random halves
//   partition-one              one random node alone
//   partition-majorities-ring  every node sees a majority, no two the same one
//   partition-bridge           two halves and one node that sees both
//   partition-leader           the server the backend names leader alone
//   partition-holder           arms; the client whose acquire completes next is cut from
//                              every server (not from the resource) for --pause-ms: the
//                              network-delay form of the article's pause
// Records "partition" with the grudge, then "heal". Open-ended except partition-holder. A
// node whose rules could not be changed by the action's deadline (a silent ssh host) is
// named in the line ("not_cut" / "not_healed": node → why) and the action then throws
// HarnessError: the schedule stops and the run says which host failed.
// Thread-safe as nemesis.h says: the family's lock is held across an iptables change
// (bounded by kNetBound), describe_active never waits for it; partition-holder listens to
// acquire-ok on the lock-event bus.
#pragma once

#include <atomic>

#include <mutex>
#include <optional>

#include "nemesis/fault_status.h"
#include "nemesis/nemesis.h"

namespace fencecheck {

class PartitionNemesis : public Nemesis {
 public:
  PartitionNemesis(NemesisContext& ctx, const FaultOptions& options);
  void start(const std::string& fault, std::mt19937_64& rng) override;
  void replay(const std::string& f, const nlohmann::json& value) override;
  void tick() override;
  std::optional<TimeSource::Instant> due() const override;
  bool active() const override { return status_.any(); }
  bool acting() const override { return status_.acting(); }
  std::vector<std::string> describe_active() const override { return status_.shown(); }
  void heal() override;

 private:
  std::vector<std::string> members() const;  // servers, then clients
  void cut_locked(const std::string& fault, const Grudge& g,
                  std::optional<TimeSource::Instant> until);
  void heal_locked();
  void show_locked();
  void on_acquired(const LockEvent& e);

  NemesisContext& ctx_;
  FaultOptions options_;
  mutable std::mutex mu_;                                  // the family's action lock
  std::atomic<bool> armed_{false};  // holder_armed_ is set: read without the lock
  std::optional<std::chrono::milliseconds> holder_armed_;  // the cut's length once armed
  std::optional<std::string> fault_;                      // in force
  std::optional<TimeSource::Instant> until_;              // partition-holder's end
  std::string what_;                                      // for describe_active
  FaultStatus status_;
  LockEventSubscriptions subscriptions_;  // last: dropped first, before what it reads
};

std::unique_ptr<Nemesis> make_partition_nemesis(NemesisContext& ctx, const FaultOptions& options);

}  // namespace fencecheck
