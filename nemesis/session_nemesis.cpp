#include "nemesis/session_nemesis.h"

#include <stdexcept>

namespace fencecheck {

namespace {

constexpr const char* kKillSession = "kill-session";

}  // namespace

SessionNemesis::SessionNemesis(NemesisContext& ctx, const FaultOptions&) : ctx_(ctx), subscriptions_(ctx.events) {
  subscriptions_.add({LockEventKind::kAcquireOk}, [this](const LockEvent& e) { on_acquired(e); });
}

void SessionNemesis::start(const std::string& fault, std::mt19937_64&) {
  if (fault != kKillSession) throw std::invalid_argument("SessionNemesis cannot start fault \"" + fault + "\"");
  std::lock_guard lock(mu_);
  if (!armed_) arm_locked();
}

void SessionNemesis::replay(const std::string& f, const nlohmann::json& value) {
  const std::string fault = value.at("fault").get<std::string>();
  if (fault != kKillSession) throw std::invalid_argument("the session family has no fault \"" + fault + "\"");
  if (f == "arm") {
    std::lock_guard lock(mu_);
    arm_locked();
  } else if (f != kKillSession) {
    throw std::invalid_argument("the session family cannot replay \"" + f + "\"");
  }
}

void SessionNemesis::arm_locked() {
  armed_ = true;
  ctx_.log.record("arm", {{"fault", kKillSession}});
  status_.show({std::string(kKillSession) + " (armed)"}, true);
}

void SessionNemesis::on_acquired(const LockEvent& e) {
  if (!armed_) return;  // the common case, without waiting for a kill in progress
  std::lock_guard lock(mu_);
  if (!armed_.exchange(false)) return;  // another client's grant took it first
  status_.show({std::string(kKillSession) + " " + e.client});
  nlohmann::json value = {{"fault", kKillSession}, {"targets", {e.client}}};
  std::optional<int> ended;
  try {
    ended = ctx_.servers.kill_sessions(e.client, ctx_.act(kSessionBound));
  } catch (const std::exception& error) {
    value["sessions"] = 0;
    value["not_applied"] = error.what();  // on the record either way
    ctx_.log.record(kKillSession, value);
    status_.clear();
    throw;
  }
  value["sessions"] = ended.value_or(0);
  if (!ended) {
    value["not_applied"] = "a server was down or paused (or another fault's action on it outlasted the deadline)";
  } else if (*ended == 0) {
    value["not_applied"] = e.client + " had no session open on the servers";
  }
  ctx_.log.record(kKillSession, value);
  status_.clear();
}

void SessionNemesis::heal() {
  std::lock_guard lock(mu_);
  armed_ = false;
  status_.clear();
}

std::unique_ptr<Nemesis> make_session_nemesis(NemesisContext& ctx, const FaultOptions& options) {
  return std::make_unique<SessionNemesis>(ctx, options);
}

}  // namespace fencecheck
