#include "nemesis/pause_nemesis.h"

#include <stdexcept>

namespace fencecheck {

void PauseNemesis::start(const std::string& fault, std::mt19937_64& rng) {
  if (fault != "pause-holder" && fault != "pause-client" && fault != "pause-server") {
    throw std::invalid_argument("PauseNemesis cannot start fault \"" + fault + "\"");
  }
  std::lock_guard lock(mu_);
  if (paused_ || holder_armed_) return;
  if (fault == "pause-holder") {
    holder_armed_ = true;
    return;
  }
  NodeProcesses& role = fault == "pause-client" ? ctx_.clients : ctx_.servers;
  std::vector<std::string> nodes = role.nodes();
  if (nodes.empty()) return;
  pause_locked(fault, role, nodes[rng() % nodes.size()]);
}

void PauseNemesis::on_acquired(const std::string& client_node) {
  std::lock_guard lock(mu_);
  if (!holder_armed_ || paused_) return;
  holder_armed_ = false;
  pause_locked("pause-holder", ctx_.clients, client_node);
}

void PauseNemesis::tick() {
  std::lock_guard lock(mu_);
  if (paused_ && ctx_.time.now() >= paused_->until) resume_locked();
}

bool PauseNemesis::active() const {
  std::lock_guard lock(mu_);
  return holder_armed_ || paused_.has_value();
}

std::vector<std::string> PauseNemesis::describe_active() const {
  std::lock_guard lock(mu_);
  if (paused_) return {paused_->fault + " " + paused_->node};
  if (holder_armed_) return {"pause-holder (armed)"};
  return {};
}

void PauseNemesis::heal() {
  std::lock_guard lock(mu_);
  holder_armed_ = false;
  if (paused_) resume_locked();
}

void PauseNemesis::pause_locked(const std::string& fault, NodeProcesses& role,
                                const std::string& node) {
  role.pause(node);
  ctx_.log.record("pause", {{"fault", fault}, {"targets", {node}}, {"ms", options_.pause.count()}});
  paused_ = Paused{fault, node, &role, ctx_.time.now() + options_.pause};
}

void PauseNemesis::resume_locked() {
  paused_->role->resume(paused_->node);
  ctx_.log.record("resume", {{"fault", paused_->fault}, {"targets", {paused_->node}}});
  paused_.reset();
}

std::unique_ptr<Nemesis> make_pause_nemesis(NemesisContext& ctx, const FaultOptions& options) {
  return std::make_unique<PauseNemesis>(ctx, options);
}

}  // namespace fencecheck
