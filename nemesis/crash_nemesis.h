// CrashNemesis (family "crash"): processes die and come back, through NodeProcesses.
//   kill-server     SIGKILL a target set of servers — one, a minority, a majority or all,
//                   drawn per fault (Jepsen's db-nodes specs) unless FaultOptions::targets
//                   names one (nemesis/targets.h) — and start them again after
//                   FaultOptions::restart (0: at once) on the same data directories, so
//                   what survives is what the backend's persistence kept
//   restart-server  one random server stopped gracefully and started again
//   kill-client     SIGKILL a random client's worker (its op in flight ends info, the
//                   client goes on under a new process number) and start a new worker
//                   after FaultOptions::restart
// Records "kill" with the targets and the restart delay, "start" when they are back, and
// "restart". Self-timed. Thread-safe.
#pragma once

#include <mutex>
#include <optional>

#include "nemesis/nemesis.h"

namespace fencecheck {

class CrashNemesis : public Nemesis {
 public:
  CrashNemesis(NemesisContext& ctx, const FaultOptions& options) : ctx_(ctx), options_(options) {}
  void start(const std::string& fault, std::mt19937_64& rng) override;
  void replay(const std::string& f, const nlohmann::json& value) override;
  void tick() override;
  bool active() const override;
  std::vector<std::string> describe_active() const override;
  void heal() override;

 private:
  struct Down {
    std::string fault;
    std::vector<std::string> nodes;
    NodeProcesses* role;
    TimeSource::Instant until;
  };
  void kill_locked(const std::string& fault, NodeProcesses& role, const std::vector<std::string>& nodes,
                   std::chrono::milliseconds restart);
  void start_locked();
  NodeProcesses& role_of(const std::string& fault);

  NemesisContext& ctx_;
  FaultOptions options_;
  mutable std::mutex mu_;
  std::optional<Down> down_;
};

std::unique_ptr<Nemesis> make_crash_nemesis(NemesisContext& ctx, const FaultOptions& options);

}  // namespace fencecheck
