#include "nemesis/pause_nemesis.h"

#include <csignal>
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
  std::vector<std::string> nodes = fault == "pause-client" ? env_.client_nodes() : env_.server_nodes();
  if (nodes.empty()) return;
  pause_locked(fault, nodes[rng() % nodes.size()]);
}

void PauseNemesis::on_acquired(const std::string& client_node) {
  std::lock_guard lock(mu_);
  if (!holder_armed_ || paused_) return;
  holder_armed_ = false;
  pause_locked("pause-holder", client_node);
}

void PauseNemesis::tick() {
  std::lock_guard lock(mu_);
  if (paused_ && Clock::now() >= paused_->until) resume_locked();
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

void PauseNemesis::pause_locked(const std::string& fault, const std::string& node) {
  env_.signal_node(node, SIGSTOP);
  env_.record("pause", {{"fault", fault}, {"targets", {node}}, {"ms", options_.pause.count()}});
  paused_ = Paused{fault, node, Clock::now() + options_.pause};
}

void PauseNemesis::resume_locked() {
  env_.signal_node(paused_->node, SIGCONT);
  env_.record("resume", {{"fault", paused_->fault}, {"targets", {paused_->node}}});
  paused_.reset();
}

}  // namespace fencecheck
