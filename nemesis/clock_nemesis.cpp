#include "nemesis/clock_nemesis.h"

#include "nemesis/targets.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fencecheck {

using std::chrono::milliseconds;

namespace {

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

nlohmann::json offsets_json(const std::map<std::string, milliseconds>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [node, ms] : m) j[node] = ms.count();
  return j;
}

}  // namespace

std::vector<std::string> ClockNemesis::targets(std::mt19937_64& rng) const {
  const std::string spec = options_.text("nemesis-targets");
  if (spec == kClientTargets) return pick_targets(ctx_.clients.nodes(), "random", rng);
  return pick_targets(ctx_.servers.nodes(), spec.empty() ? "random" : spec, rng);
}

std::vector<std::string> ClockNemesis::shiftable_nodes() const {
  std::vector<std::string> nodes = ctx_.servers.nodes();
  nodes.insert(nodes.end(), shifted_clients_.begin(), shifted_clients_.end());
  return nodes;
}

void ClockNemesis::note_clients_locked(const std::vector<std::string>& nodes) {
  const std::vector<std::string> servers = ctx_.servers.nodes();
  for (const auto& n : nodes) {
    if (std::find(servers.begin(), servers.end(), n) == servers.end()) shifted_clients_.insert(n);
  }
}

milliseconds ClockNemesis::capped(double ms) const {
  const auto max_ms = static_cast<double>(options_.integer("clock-max-ms"));
  return milliseconds(static_cast<std::int64_t>(std::min(ms, max_ms)));
}

void ClockNemesis::start(const std::string& fault, std::mt19937_64& rng) {
  std::lock_guard lock(mu_);
  if (strobe_) return;
  if (fault == "clock-bump") {
    std::map<std::string, milliseconds> deltas;
    for (const auto& node : targets(rng)) {
      milliseconds d = std::max(options_.ms("clock-min-ms"), capped(std::pow(1.5, 6 + uniform(rng, 0, 25))));
      deltas[node] = rng() % 2 ? d : -d;
    }
    if (!deltas.empty()) bump_locked(deltas);
  } else if (fault == "clock-strobe") {
    std::vector<std::string> nodes = targets(rng);
    milliseconds delta = capped(std::pow(2.0, 2 + uniform(rng, 0, 16)));
    milliseconds period(std::max<std::int64_t>(10, static_cast<std::int64_t>(std::pow(2.0, uniform(rng, 0, 10)))));
    milliseconds duration(static_cast<std::int64_t>(uniform(rng, 0, 32) * 1000));
    if (!nodes.empty()) strobe_locked(nodes, delta, period, duration);
  } else if (fault == "clock-reset") {
    reset_locked(fault);
  } else {
    throw std::invalid_argument("ClockNemesis cannot start fault \"" + fault + "\"");
  }
}

void ClockNemesis::bump_locked(const std::map<std::string, milliseconds>& deltas) {
  std::vector<std::string> targets;
  for (const auto& [node, d] : deltas) targets.push_back(node);
  note_clients_locked(targets);
  std::map<std::string, milliseconds> now;
  for (const auto& [node, d] : deltas) {
    now[node] = ctx_.clocks.offset(node) + d;
    ctx_.clocks.set_offset(node, now[node], ctx_.act(kClockBound));
  }
  shifted_ = true;
  ctx_.log.record("clock-bump", {{"fault", "clock-bump"}, {"deltas", offsets_json(deltas)},
                                 {"offsets", offsets_json(now)}});
}

void ClockNemesis::strobe_locked(const std::vector<std::string>& targets, milliseconds delta,
                                 milliseconds period, milliseconds duration) {
  note_clients_locked(targets);
  Strobe s{{}, delta, period, ctx_.time.now(), ctx_.time.now() + duration, false};
  for (const auto& node : targets) s.base[node] = ctx_.clocks.offset(node);
  strobe_ = s;
  shifted_ = true;
  ctx_.log.record("clock-strobe", {{"fault", "clock-strobe"}, {"targets", targets},
                                   {"delta_ms", delta.count()}, {"period_ms", period.count()},
                                   {"duration_ms", duration.count()}});
}

void ClockNemesis::reset_locked(const std::string& fault) {
  // Every server, and the clients a fault shifted (they are nodes of the run's clocks too).
  std::vector<std::string> nodes = shiftable_nodes();
  for (const auto& node : nodes) ctx_.clocks.set_offset(node, milliseconds(0), ctx_.healing(kClockBound));
  shifted_clients_.clear();
  strobe_.reset();
  shifted_ = false;
  ctx_.log.record("clock-reset", {{"fault", fault}, {"targets", nodes}});
}

void ClockNemesis::replay(const std::string& f, const nlohmann::json& value) {
  std::lock_guard lock(mu_);
  if (f == "clock-bump") {
    std::map<std::string, milliseconds> deltas;
    for (const auto& [node, ms] : value.at("deltas").items()) deltas[node] = milliseconds(ms.get<std::int64_t>());
    bump_locked(deltas);
  } else if (f == "clock-strobe") {
    strobe_locked(value.at("targets").get<std::vector<std::string>>(),
                  milliseconds(value.at("delta_ms").get<std::int64_t>()),
                  milliseconds(value.at("period_ms").get<std::int64_t>()),
                  milliseconds(value.at("duration_ms").get<std::int64_t>()));
  } else if (f == "clock-reset") {
    // A strobe's own reset follows by itself; any other reset is replayed.
    if (value.at("fault") != "clock-strobe") reset_locked(value.at("fault").get<std::string>());
  } else {
    throw std::invalid_argument("the clock family cannot replay \"" + f + "\"");
  }
}

void ClockNemesis::tick() {
  std::lock_guard lock(mu_);
  if (!strobe_) return;
  TimeSource::Instant now = ctx_.time.now();
  if (now >= strobe_->until) {
    reset_locked("clock-strobe");
    return;
  }
  if (now < strobe_->next_flip) return;
  strobe_->high = !strobe_->high;
  for (const auto& [node, base] : strobe_->base) {
    ctx_.clocks.set_offset(node, strobe_->high ? base + strobe_->delta : base, ctx_.act(kClockBound));
  }
  strobe_->next_flip = now + strobe_->period;
}

std::optional<TimeSource::Instant> ClockNemesis::due() const {
  std::lock_guard lock(mu_);
  if (!strobe_) return std::nullopt;
  return std::min(strobe_->next_flip, strobe_->until);
}

bool ClockNemesis::active() const {
  std::lock_guard lock(mu_);
  return shifted_;
}

std::vector<std::string> ClockNemesis::describe_active() const {
  std::lock_guard lock(mu_);
  if (strobe_) return {"clock-strobe " + std::to_string(strobe_->delta.count()) + " ms"};
  if (!shifted_) return {};
  std::string s = "clock offsets";
  for (const auto& node : shiftable_nodes()) {
    if (milliseconds o = ctx_.clocks.offset(node); o.count() != 0) s += " " + node + ":" + std::to_string(o.count()) + "ms";
  }
  return {s};
}

void ClockNemesis::heal() {
  std::lock_guard lock(mu_);
  if (shifted_ || strobe_) reset_locked(strobe_ ? "clock-strobe" : "clock-bump");
}

std::unique_ptr<Nemesis> make_clock_nemesis(NemesisContext& ctx, const FaultOptions& options) {
  return std::make_unique<ClockNemesis>(ctx, options);
}

}  // namespace fencecheck
