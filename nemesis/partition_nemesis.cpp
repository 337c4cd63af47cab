#include "nemesis/partition_nemesis.h"

#include <stdexcept>

#include "nemesis/grudges.h"
#include "platform/errors.h"

namespace fencecheck {

namespace {

// The line's value with the nodes a change did not reach, under `field`; throws once the
// line is recorded, naming them.
void record_net_change(FaultLog& log, const std::string& f, nlohmann::json value, const NetFailures& failures,
                       const char* field) {
  if (!failures.empty()) value[field] = failures;
  log.record(f, value);
  if (failures.empty()) return;
  std::string which;
  for (const auto& [node, why] : failures) which += (which.empty() ? "" : "; ") + node + ": " + why;
  throw HarnessError("the " + f + " (" + value.at("fault").get<std::string>() + ") did not reach every node: " + which);
}

}  // namespace

PartitionNemesis::PartitionNemesis(NemesisContext& ctx, const FaultOptions& options)
    : ctx_(ctx), options_(options), subscriptions_(ctx.events) {
  subscriptions_.add({LockEventKind::kAcquireOk}, [this](const LockEvent& e) { on_acquired(e); });
}

std::vector<std::string> PartitionNemesis::members() const {
  std::vector<std::string> all = ctx_.servers.nodes();
  for (const auto& c : ctx_.clients.nodes()) all.push_back(c);
  return all;
}

void PartitionNemesis::start(const std::string& fault, std::mt19937_64& rng) {
  std::lock_guard lock(mu_);
  if (fault_ || holder_armed_) return;
  if (fault == "partition-holder") {
    holder_armed_ = options_.ms("pause-ms");
    armed_ = true;
    ctx_.log.record("arm", {{"fault", fault}, {"ms", options_.integer("pause-ms")}});
    show_locked();
    return;
  }
  Grudge g;
  if (fault == "partition-halves") {
    g = partition_halves(members(), rng);
  } else if (fault == "partition-one") {
    g = partition_one(members(), rng);
  } else if (fault == "partition-majorities-ring") {
    g = partition_majorities_ring(members(), rng);
  } else if (fault == "partition-bridge") {
    g = partition_bridge(members(), rng);
  } else if (fault == "partition-leader") {
    std::optional<std::string> leader = ctx_.servers.leader();
    if (!leader) return;  // no leader right now (an election): nothing to cut
    g = isolate(*leader, members());
  } else {
    throw std::invalid_argument("PartitionNemesis cannot start fault \"" + fault + "\"");
  }
  cut_locked(fault, g, std::nullopt);
}

void PartitionNemesis::on_acquired(const LockEvent& e) {
  if (!armed_) return;  // the common case, without waiting for a cut in progress
  const std::string& client_node = e.client;
  std::lock_guard lock(mu_);
  if (!holder_armed_ || fault_) return;
  std::chrono::milliseconds ms = *holder_armed_;
  holder_armed_.reset();
  armed_ = false;
  std::vector<std::string> with = ctx_.servers.nodes();
  with.push_back(client_node);
  cut_locked("partition-holder", isolate(client_node, with), ctx_.time.now() + ms);
}

void PartitionNemesis::replay(const std::string& f, const nlohmann::json& value) {
  const std::string fault = value.at("fault").get<std::string>();
  std::lock_guard lock(mu_);
  if (f == "arm") {
    if (!fault_) {
      holder_armed_ = std::chrono::milliseconds(value.at("ms").get<std::int64_t>());
      armed_ = true;
      show_locked();
    }
  } else if (f == "partition" && fault != "partition-holder") {
    cut_locked(fault, grudge_from_json(value.at("grudge")), std::nullopt);
  } else if (f == "heal") {
    if (fault != "partition-holder") heal_locked();  // the holder's cut ends by itself
  } else if (f != "partition") {
    throw std::invalid_argument("the partition family cannot replay \"" + f + "\"");
  }
}

void PartitionNemesis::cut_locked(const std::string& fault, const Grudge& g,
                                  std::optional<TimeSource::Instant> until) {
  const NetFailures failures = ctx_.net.cut(g, ctx_.act(kNetBound));
  nlohmann::json value = {{"fault", fault}, {"grudge", grudge_to_json(g)}};
  if (until) value["ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(*until - ctx_.time.now()).count();
  // In force (and healed later) even when a node did not take its part of it.
  fault_ = fault;
  until_ = until;
  std::size_t cut = 0;
  for (const auto& [node, drops] : g) cut += !drops.empty();
  what_ = fault + " (" + std::to_string(cut) + " nodes cut off)";
  show_locked();
  record_net_change(ctx_.log, "partition", value, failures, "not_cut");
}

void PartitionNemesis::heal_locked() {
  if (!fault_) return;
  const NetFailures failures = ctx_.net.heal(ctx_.healing(kNetBound));
  const std::string fault = *fault_;
  fault_.reset();
  until_.reset();
  show_locked();
  record_net_change(ctx_.log, "heal", {{"fault", fault}}, failures, "not_healed");
}

void PartitionNemesis::show_locked() {
  if (fault_) {
    status_.show({what_});
  } else if (holder_armed_) {
    status_.show({"partition-holder (armed)"}, true);
  } else {
    status_.clear();
  }
}

void PartitionNemesis::tick() {
  std::lock_guard lock(mu_);
  if (until_ && ctx_.time.now() >= *until_) heal_locked();
}

std::optional<TimeSource::Instant> PartitionNemesis::due() const {
  std::lock_guard lock(mu_);
  return until_;
}

void PartitionNemesis::heal() {
  std::lock_guard lock(mu_);
  holder_armed_.reset();
  armed_ = false;
  heal_locked();
  show_locked();
}

std::unique_ptr<Nemesis> make_partition_nemesis(NemesisContext& ctx, const FaultOptions& options) {
  return std::make_unique<PartitionNemesis>(ctx, options);
}

}  // namespace fencecheck
