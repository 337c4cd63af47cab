// SessionNemesis (family "session"): the lock service ends a client's sessions — its own
// kill of a connection (PostgreSQL's pg_terminate_backend, MariaDB's KILL), as an operator
// would, taking the session-bound locks with them.
//   kill-session  arms (recorded as "arm"); the next client whose acquire completes ok has
//                 every session it holds on the servers ended at once, from that lock event
//                 and before the client's next op (NodeProcesses::kill_sessions of the
//                 servers, bounded by kSessionBound). Recorded "kill-session" with the
//                 client in "targets" and the number ended in "sessions"; none ended (the
//                 client had no session there, a server was down or paused) is recorded
//                 with "not_applied" saying why. The holder learns of it only at its next
//                 statement to the server.
// Needs a backend with sessions to end (Capability::kKillsSessions) whose servers the run
// runs; the run refuses it elsewhere. A kill the servers refuse or do not answer by the
// deadline is recorded with "not_applied" and throws HarnessError (on the client's thread:
// the run ends and says why).
// Thread-safe as nemesis.h says: the family's lock is held across the kill (≤
// kSessionBound), describe_active never waits for it; the client threads read whether it
// is armed without the lock.
#pragma once

#include <atomic>
#include <mutex>

#include "nemesis/fault_status.h"
#include "nemesis/nemesis.h"

namespace fencecheck {

class SessionNemesis : public Nemesis {
 public:
  SessionNemesis(NemesisContext& ctx, const FaultOptions& options);
  void start(const std::string& fault, std::mt19937_64& rng) override;
  // "arm" re-arms (the next grant fires it again); the "kill-session" line itself follows
  // from that and is not applied again.
  void replay(const std::string& f, const nlohmann::json& value) override;
  void tick() override {}  // nothing is timed: the kill is over when its line is written
  bool active() const override { return status_.any(); }
  bool acting() const override { return status_.acting(); }
  std::vector<std::string> describe_active() const override { return status_.shown(); }
  void heal() override;  // disarms; a kill in progress finishes (its sessions stay ended)

 private:
  void arm_locked();
  void on_acquired(const LockEvent& e);

  NemesisContext& ctx_;
  mutable std::mutex mu_;           // the family's action lock
  std::atomic<bool> armed_{false};  // read without the lock by the client threads
  FaultStatus status_;
  LockEventSubscriptions subscriptions_;  // last: dropped first, before what it reads
};

std::unique_ptr<Nemesis> make_session_nemesis(NemesisContext& ctx, const FaultOptions& options);

}  // namespace fencecheck
