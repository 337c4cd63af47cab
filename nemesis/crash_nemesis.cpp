#include "nemesis/crash_nemesis.h"

#include "nemesis/targets.h"

#include <algorithm>
#include <stdexcept>

namespace fencecheck {

using std::chrono::milliseconds;

NodeProcesses& CrashNemesis::role_of(const std::string& fault) {
  return fault == "kill-client" ? ctx_.clients : ctx_.servers;
}

void CrashNemesis::start(const std::string& fault, std::mt19937_64& rng) {
  std::lock_guard lock(mu_);
  if (down_) return;
  if (fault == "kill-server") {
    static const char* kSpecs[] = {"one", "minority", "majority", "all"};
    const std::string spec = options_.targets.empty() ? kSpecs[rng() % 4] : options_.targets;
    kill_locked(fault, ctx_.servers, pick_targets(ctx_.servers.nodes(), spec, rng), options_.restart);
  } else if (fault == "kill-client") {
    kill_locked(fault, ctx_.clients, pick_targets(ctx_.clients.nodes(), "one", rng), options_.restart);
  } else if (fault == "restart-server") {
    std::vector<std::string> node = pick_targets(ctx_.servers.nodes(), "one", rng);
    for (const auto& n : node) {
      ctx_.servers.stop(n);
      ctx_.servers.start(n);
    }
    ctx_.log.record("restart", {{"fault", fault}, {"targets", node}});
  } else {
    throw std::invalid_argument("CrashNemesis cannot start fault \"" + fault + "\"");
  }
}

void CrashNemesis::kill_locked(const std::string& fault, NodeProcesses& role,
                               const std::vector<std::string>& nodes, milliseconds restart) {
  if (nodes.empty()) return;
  for (const auto& n : nodes) role.kill(n);
  ctx_.log.record("kill", {{"fault", fault}, {"targets", nodes}, {"restart_ms", restart.count()}});
  down_ = Down{fault, nodes, &role, ctx_.time.now() + restart};
  if (restart.count() == 0) start_locked();
}

void CrashNemesis::start_locked() {
  if (!down_) return;
  for (const auto& n : down_->nodes) down_->role->start(n);
  ctx_.log.record("start", {{"fault", down_->fault}, {"targets", down_->nodes}});
  down_.reset();
}

void CrashNemesis::replay(const std::string& f, const nlohmann::json& value) {
  const std::string fault = value.at("fault").get<std::string>();
  std::lock_guard lock(mu_);
  if (f == "kill") {
    start_locked();
    kill_locked(fault, role_of(fault), value.at("targets").get<std::vector<std::string>>(),
                milliseconds(value.at("restart_ms").get<std::int64_t>()));
  } else if (f == "restart") {
    for (const auto& n : value.at("targets")) {
      ctx_.servers.stop(n.get<std::string>());
      ctx_.servers.start(n.get<std::string>());
    }
    ctx_.log.record("restart", value);
  } else if (f != "start") {  // a kill's start follows by itself
    throw std::invalid_argument("the crash family cannot replay \"" + f + "\"");
  }
}

void CrashNemesis::tick() {
  std::lock_guard lock(mu_);
  if (down_ && ctx_.time.now() >= down_->until) start_locked();
}

bool CrashNemesis::active() const {
  std::lock_guard lock(mu_);
  return down_.has_value();
}

std::vector<std::string> CrashNemesis::describe_active() const {
  std::lock_guard lock(mu_);
  if (!down_) return {};
  std::string s = down_->fault;
  for (const auto& n : down_->nodes) s += " " + n;
  return {s};
}

void CrashNemesis::heal() {
  std::lock_guard lock(mu_);
  start_locked();
}

std::unique_ptr<Nemesis> make_crash_nemesis(NemesisContext& ctx, const FaultOptions& options) {
  return std::make_unique<CrashNemesis>(ctx, options);
}

}  // namespace fencecheck
