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

constexpr const char* kAfterSend = "pause-after-send";

}  // namespace

PauseNemesis::PauseNemesis(NemesisContext& ctx, const FaultOptions& options)
    : ctx_(ctx), options_(options), subscriptions_(ctx.events) {
  subscriptions_.add({LockEventKind::kAcquireSent, LockEventKind::kAcquireOk, LockEventKind::kAcquireEnded,
                      LockEventKind::kNotice},
                     [this](const LockEvent& e) { on_lock_event(e); });
}

void PauseNemesis::start(const std::string& fault, std::mt19937_64& rng) {
  if (!known(fault)) {
    throw std::invalid_argument("PauseNemesis cannot start fault \"" + fault + "\"");
  }
  std::lock_guard lock(mu_);
  if (paused_ || inside_ || armed_ != Armed::kNone) return;
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
    if (!paused_ && !inside_) arm_locked(fault, std::chrono::milliseconds(value.at("ms").get<std::int64_t>()));
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
  if (fault == kAfterSend) ctx_.clients.arm_pause_inside(ms);  // throws where no client can
  armed_ = fault == "pause-holder" ? Armed::kHolder : fault == "pause-acquirer" ? Armed::kAcquirer : Armed::kAfterSend;
  armed_ms_ = ms;
  ctx_.log.record("arm", {{"fault", fault}, {"ms", ms.count()}});
  show_locked();
}

void PauseNemesis::on_lock_event(const LockEvent& e) {
  switch (e.kind) {
    case LockEventKind::kAcquireOk:
      if (armed_ != Armed::kHolder) return;  // the common case, without waiting for a pause in progress
      {
        std::lock_guard lock(mu_);
        if (armed_ != Armed::kHolder || paused_) return;
        armed_ = Armed::kNone;
        pause_locked("pause-holder", ctx_.clients, e.client, armed_ms_);
      }
      return;
    case LockEventKind::kAcquireSent:
      if (armed_ == Armed::kAcquirer) {
        std::lock_guard lock(flight_mu_);
        in_flight_[e.client] = Flight{e.at};
      }
      if (e.pause_inside.count() > 0) {  // the pause this family armed, taken by this acquire
        std::lock_guard lock(mu_);
        armed_ = Armed::kNone;
        inside_ = Inside{e.client, e.pause_inside};
        inside_set_ = true;
        show_locked();
      }
      return;
    case LockEventKind::kNotice:
      if (e.notice != "paused" || !inside_set_) return;
      {
        std::lock_guard lock(mu_);
        if (inside_ && inside_->node == e.client && !inside_->recorded) record_inside_pause_locked(e.client);
      }
      return;
    case LockEventKind::kAcquireEnded:
      on_acquire_ended(e);
      return;
    case LockEventKind::kRelease:
      return;
  }
}

void PauseNemesis::on_acquire_ended(const LockEvent& e) {
  {
    // A client being stopped by pause-acquirer right now: its acquire came back meanwhile,
    // and is recorded once the stop is (≤ kSignalBound), never before it.
    std::unique_lock lock(flight_mu_);
    flight_cv_.wait(lock, [&] {
      auto it = in_flight_.find(e.client);
      return it == in_flight_.end() || !it->second.pausing;
    });
    in_flight_.erase(e.client);
  }
  if (!inside_set_) return;  // the common case, without waiting for a pause in progress
  std::lock_guard lock(mu_);
  if (!inside_ || inside_->node != e.client) return;
  if (!inside_->recorded) {
    if (e.paused_inside != true) {
      ctx_.log.record("pause", {{"fault", kAfterSend},
                                {"targets", {e.client}},
                                {"ms", inside_->ms.count()},
                                {"not_applied", e.paused_inside.has_value()
                                                    ? "the lock library answered the acquire without pausing (it sent "
                                                      "no lock command, or failed first)"
                                                    : "unknown whether the lock library paused: its worker did not "
                                                      "answer the acquire"}});
      inside_.reset();
      inside_set_ = false;
      show_locked();
      return;
    }
    record_inside_pause_locked(e.client);  // its notice is still on its way: the pause was real
  }
  ctx_.log.record("resume", {{"fault", kAfterSend}, {"targets", {e.client}}});
  inside_.reset();
  inside_set_ = false;
  show_locked();
}

void PauseNemesis::record_inside_pause_locked(const std::string& node) {
  ctx_.log.record("pause", {{"fault", kAfterSend},
                            {"targets", {node}},
                            {"ms", inside_->ms.count()},
                            {"inside", "the lock library, after it sent the acquire's lock commands"}});
  inside_->recorded = true;
  show_locked();
}

void PauseNemesis::pause_acquirer_locked() {
  if (armed_ != Armed::kAcquirer || paused_) return;
  std::string node;
  {
    std::lock_guard lock(flight_mu_);
    for (auto& [client, flight] : in_flight_) {
      if (!flight.pausing && ctx_.time.now() >= flight.sent + kAcquirerDelay) {
        flight.pausing = true;  // from here its acquire-ended waits for the stop
        node = client;
        break;
      }
    }
  }
  if (node.empty()) return;
  armed_ = Armed::kNone;
  auto done = [&] {
    {
      std::lock_guard lock(flight_mu_);
      if (auto it = in_flight_.find(node); it != in_flight_.end()) it->second.pausing = false;
    }
    flight_cv_.notify_all();
  };
  try {
    pause_locked("pause-acquirer", ctx_.clients, node, armed_ms_);
  } catch (...) {
    done();
    throw;
  }
  done();
}

void PauseNemesis::tick() {
  std::lock_guard lock(mu_);
  if (paused_ && ctx_.time.now() >= paused_->until) resume_locked();
  if (!paused_) pause_acquirer_locked();
}

std::optional<TimeSource::Instant> PauseNemesis::due() const {
  std::lock_guard lock(mu_);
  if (paused_) return paused_->until;
  if (armed_ == Armed::kAcquirer) {
    std::lock_guard flight(flight_mu_);
    std::optional<TimeSource::Instant> first;
    for (const auto& [node, f] : in_flight_) {
      if (!first || f.sent + kAcquirerDelay < *first) first = f.sent + kAcquirerDelay;
    }
    return first;
  }
  return std::nullopt;
}

void PauseNemesis::heal() {
  std::lock_guard lock(mu_);
  // An armed in-library pause no acquire took yet is taken back; one in progress ends by
  // itself, its resume recorded when its acquire comes back.
  if (armed_ == Armed::kAfterSend) ctx_.clients.arm_pause_inside(std::chrono::milliseconds(0));
  armed_ = Armed::kNone;
  if (paused_) resume_locked();
  show_locked();
}

void PauseNemesis::pause_locked(const std::string& fault, NodeProcesses& role,
                                const std::string& node, std::chrono::milliseconds ms) {
  nlohmann::json value = {{"fault", fault}, {"targets", {node}}, {"ms", ms.count()}};
  const bool frozen = is_freeze(fault);
  if (frozen) {
    role.freeze(node, ctx_.act(kFreezeBound));  // the container, whether or not its process runs
  } else if (!role.pause(node, ctx_.act(kSignalBound))) {
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
  const Paused p = *paused_;
  paused_.reset();  // whatever happens below, this pause is over for the family
  show_locked();
  nlohmann::json value = {{"fault", p.fault}, {"targets", {p.node}}};
  try {
    if (p.frozen) {
      p.role->thaw(p.node, ctx_.healing(kFreezeBound));
    } else {
      p.role->resume(p.node, ctx_.healing(kSignalBound));
    }
  } catch (const std::exception& e) {
    value["not_applied"] = e.what();  // on the record either way: a silent host is not resumed
    ctx_.log.record("resume", value);
    throw;
  }
  ctx_.log.record("resume", value);
}

void PauseNemesis::show_locked() {
  static constexpr const char* kArmed[] = {"", "pause-holder (armed)", "pause-acquirer (armed)",
                                            "pause-after-send (armed)"};
  if (paused_) {
    status_.show({paused_->fault + " " + paused_->node});
  } else if (inside_) {
    status_.show({std::string(kAfterSend) + " " + inside_->node});
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
