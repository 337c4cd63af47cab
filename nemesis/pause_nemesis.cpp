#include "nemesis/pause_nemesis.h"

#include <stdexcept>

namespace fencecheck {

namespace {

bool is_freeze(const std::string& fault) { return fault == "freeze-client" || fault == "freeze-server"; }
bool on_clients(const std::string& fault) { return fault == "pause-client" || fault == "freeze-client"; }
bool lock_aware(const std::string& fault) {
  return fault == "pause-holder" || fault == "pause-acquirer" || fault == "pause-after-send";
}
bool known(const std::string& fault) {
  return lock_aware(fault) || fault == "pause-client" || fault == "pause-server" || is_freeze(fault);
}

// How long an acquire must have been in flight before pause-acquirer stops its client: long
// enough that the worker (and its adapter) have the request, short next to a lock's wait.
constexpr std::chrono::milliseconds kAcquirerDelay{20};

}  // namespace

void PauseNemesis::start(const std::string& fault, std::mt19937_64& rng) {
  if (!known(fault)) {
    throw std::invalid_argument("PauseNemesis cannot start fault \"" + fault + "\"");
  }
  std::lock_guard lock(mu_);
  if (paused_ || armed_ != Armed::kNone) return;
  if (lock_aware(fault)) {
    arm_locked(fault, options_.ms("pause-ms"));
    return;
  }
  NodeProcesses& role = on_clients(fault) ? ctx_.clients : ctx_.servers;
  std::vector<std::string> nodes = role.nodes();
  if (nodes.empty()) return;
  pause_locked(fault, role, nodes[rng() % nodes.size()], options_.ms("pause-ms"));
}

void PauseNemesis::replay(const std::string& f, const nlohmann::json& value) {
  const std::string fault = value.at("fault").get<std::string>();
  std::lock_guard lock(mu_);
  if (f == "arm" && lock_aware(fault)) {
    if (!paused_) arm_locked(fault, std::chrono::milliseconds(value.at("ms").get<std::int64_t>()));
  } else if (f == "pause" && !lock_aware(fault)) {
    if (!known(fault)) throw std::invalid_argument("the pause family has no fault \"" + fault + "\"");
    if (paused_) resume_locked();
    NodeProcesses& role = on_clients(fault) ? ctx_.clients : ctx_.servers;
    pause_locked(fault, role, value.at("targets").at(0).get<std::string>(),
                 std::chrono::milliseconds(value.at("ms").get<std::int64_t>()));
  } else if (f != "pause" && f != "resume") {
    // An armed fault pauses whoever acquires next, and pauses end after their own ms.
    throw std::invalid_argument("the pause family cannot replay \"" + f + "\"");
  }
}

void PauseNemesis::arm_locked(const std::string& fault, std::chrono::milliseconds ms) {
  armed_ = fault == "pause-holder" ? Armed::kHolder : fault == "pause-acquirer" ? Armed::kAcquirer : Armed::kAfterSend;
  armed_ms_ = ms;
  ctx_.log.record("arm", {{"fault", fault}, {"ms", ms.count()}});
  show_locked();
}

void PauseNemesis::on_acquired(const std::string& client_node) {
  if (armed_ != Armed::kHolder) return;  // the common case, without waiting for a pause in progress
  std::lock_guard lock(mu_);
  if (armed_ != Armed::kHolder || paused_) return;
  armed_ = Armed::kNone;
  pause_locked("pause-holder", ctx_.clients, client_node, armed_ms_);
}

void PauseNemesis::on_acquire_sent(const std::string& client_node) {
  if (armed_ != Armed::kAcquirer) return;
  std::lock_guard lock(flight_mu_);
  in_flight_[client_node] = ctx_.time.now();
}

void PauseNemesis::on_acquire_ended(const std::string& client_node) {
  {
    std::lock_guard lock(flight_mu_);
    in_flight_.erase(client_node);
  }
  if (!inside_set_) return;  // the common case, without waiting for a pause in progress
  std::lock_guard lock(mu_);
  if (inside_ && *inside_ == client_node) {
    ctx_.log.record("resume", {{"fault", "pause-after-send"}, {"targets", {client_node}}});
    inside_.reset();
    inside_set_ = false;
    show_locked();
  }
}

std::chrono::milliseconds PauseNemesis::pause_in_acquire(const std::string& client_node) {
  if (armed_ != Armed::kAfterSend) return std::chrono::milliseconds(0);
  std::lock_guard lock(mu_);
  if (armed_ != Armed::kAfterSend || inside_) return std::chrono::milliseconds(0);
  armed_ = Armed::kNone;
  inside_ = client_node;
  inside_set_ = true;
  ctx_.log.record("pause", {{"fault", "pause-after-send"}, {"targets", {client_node}}, {"ms", armed_ms_.count()},
                            {"inside", "the lock library, after it sent the acquire's lock commands"}});
  show_locked();
  return armed_ms_;
}

std::string PauseNemesis::acquirer_due() const {
  if (armed_ != Armed::kAcquirer) return "";
  std::lock_guard lock(flight_mu_);
  for (const auto& [node, sent] : in_flight_) {
    if (ctx_.time.now() >= sent + kAcquirerDelay) return node;
  }
  return "";
}

void PauseNemesis::tick() {
  std::lock_guard lock(mu_);
  if (paused_ && ctx_.time.now() >= paused_->until) resume_locked();
  if (paused_) return;
  if (std::string node = acquirer_due(); !node.empty()) {
    armed_ = Armed::kNone;
    pause_locked("pause-acquirer", ctx_.clients, node, armed_ms_);
  }
}

std::optional<TimeSource::Instant> PauseNemesis::due() const {
  std::lock_guard lock(mu_);
  if (paused_) return paused_->until;
  if (armed_ == Armed::kAcquirer) {
    std::lock_guard flight(flight_mu_);
    std::optional<TimeSource::Instant> first;
    for (const auto& [node, sent] : in_flight_) {
      if (!first || sent + kAcquirerDelay < *first) first = sent + kAcquirerDelay;
    }
    return first;
  }
  return std::nullopt;
}

void PauseNemesis::heal() {
  std::lock_guard lock(mu_);
  armed_ = Armed::kNone;  // a pause inside a library ends by itself: its resume comes with the acquire
  if (paused_) resume_locked();
  show_locked();
}

void PauseNemesis::pause_locked(const std::string& fault, NodeProcesses& role,
                                const std::string& node, std::chrono::milliseconds ms) {
  nlohmann::json value = {{"fault", fault}, {"targets", {node}}, {"ms", ms.count()}};
  const bool frozen = is_freeze(fault);
  if (frozen) {
    role.freeze(node);  // the container, whether or not its process runs
  } else if (!role.pause(node)) {
    value["not_applied"] = node + " is down";
    ctx_.log.record("pause", value);
    show_locked();
    return;
  }
  ctx_.log.record("pause", value);
  paused_ = Paused{fault, node, &role, ctx_.time.now() + ms, frozen};
  show_locked();
}

void PauseNemesis::resume_locked() {
  if (paused_->frozen) {
    paused_->role->thaw(paused_->node);
  } else {
    paused_->role->resume(paused_->node);
  }
  ctx_.log.record("resume", {{"fault", paused_->fault}, {"targets", {paused_->node}}});
  paused_.reset();
  show_locked();
}

void PauseNemesis::show_locked() {
  static constexpr const char* kArmed[] = {"", "pause-holder (armed)", "pause-acquirer (armed)",
                                            "pause-after-send (armed)"};
  if (paused_) {
    status_.show({paused_->fault + " " + paused_->node});
  } else if (inside_) {
    status_.show({"pause-after-send " + *inside_});
  } else if (armed_ != Armed::kNone) {
    status_.show({kArmed[static_cast<int>(armed_.load())]}, true);
  } else {
    status_.clear();
  }
}

std::unique_ptr<Nemesis> make_pause_nemesis(NemesisContext& ctx, const FaultOptions& options) {
  return std::make_unique<PauseNemesis>(ctx, options);
}

}  // namespace fencecheck
