// CrashNemesis (family "crash"): processes die and come back, through NodeProcesses.
//   kill-server     SIGKILL a target set of servers — one, a minority, a majority or all,
//                   drawn per fault (Jepsen's db-nodes specs) unless --nemesis-targets
//                   names one (nemesis/targets.h) — and start them again after
//                   --restart-ms (0: at once) on the same data directories, so
//                   what survives is what the backend's persistence kept
//   restart-server  one random server stopped gracefully and started again
//   kill-client     SIGKILL a random client's worker (its op in flight ends info, the
//                   client goes on under a new process number) and start a new worker
//                   after --restart-ms
// Records "kill" with the nodes actually killed and the restart delay, "start" when they
// are launched again (on time: its planned instant is the kill's end), "restart" when a
// stopped server is launched again, and then "ready" once the family stopped waiting for
// them: every target is launched before it waits for any, and a node that does not answer
// within its readiness timeout (a quorum withheld by other faults of the run) or before
// the run ends is listed in "ready"'s "not_ready" — the system's behaviour, not the
// bench's failure. Only a process that cannot be started, or exits before it answers, is
// a HarnessError. A kill whose targets are all down already is recorded with
// "not_applied". Self-timed.
//
// Threads (nemesis.h): start/replay/tick/heal come from the family's one thread, so the
// family's state needs no lock (a kill's targets are killed on threads of their own, all
// joined before kill returns); describe_active reads a FaultStatus and never waits for a
// restart in progress. A restart blocks that thread (and only it) for up to the backend's
// readiness timeout, and gives up as soon as NemesisContext::ending says the run ends.
#pragma once

#include <optional>

#include "nemesis/fault_status.h"
#include "nemesis/nemesis.h"

namespace fencecheck {

class CrashNemesis : public Nemesis {
 public:
  CrashNemesis(NemesisContext& ctx, const FaultOptions& options) : ctx_(ctx), options_(options) {}
  void start(const std::string& fault, std::mt19937_64& rng) override;
  void replay(const std::string& f, const nlohmann::json& value) override;
  void tick() override;
  std::optional<TimeSource::Instant> due() const override;
  bool active() const override { return status_.any(); }
  std::vector<std::string> describe_active() const override { return status_.shown(); }
  void heal() override;

 private:
  struct Down {
    std::string fault;
    std::vector<std::string> nodes;
    NodeProcesses* role;
    TimeSource::Instant until;
  };
  void kill(const std::string& fault, NodeProcesses& role, const std::vector<std::string>& nodes,
            std::chrono::milliseconds restart);
  void restart_server(const std::string& fault, const std::vector<std::string>& nodes);
  // Launches down_'s nodes again and records "start"; then waits for them (await_all)
  // unless told not to (the final heal) or the run is ending.
  void bring_back(bool wait);
  // Waits for each node to answer and records "ready" with the ones that did not.
  void await_all(NodeProcesses& role, const std::string& fault, const std::vector<std::string>& nodes);
  NodeProcesses& role_of(const std::string& fault);

  NemesisContext& ctx_;
  FaultOptions options_;
  std::optional<Down> down_;
  FaultStatus status_;
};

std::unique_ptr<Nemesis> make_crash_nemesis(NemesisContext& ctx, const FaultOptions& options);

}  // namespace fencecheck
