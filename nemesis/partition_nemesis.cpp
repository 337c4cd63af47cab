#include "nemesis/partition_nemesis.h"

#include <stdexcept>

#include "nemesis/grudges.h"

namespace fencecheck {

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

void PartitionNemesis::on_acquired(const std::string& client_node) {
  if (!armed_) return;  // the common case, without waiting for a cut in progress
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
  ctx_.net.cut(g);
  nlohmann::json value = {{"fault", fault}, {"grudge", grudge_to_json(g)}};
  if (until) value["ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(*until - ctx_.time.now()).count();
  ctx_.log.record("partition", value);
  fault_ = fault;
  until_ = until;
  std::size_t cut = 0;
  for (const auto& [node, drops] : g) cut += !drops.empty();
  what_ = fault + " (" + std::to_string(cut) + " nodes cut off)";
  show_locked();
}

void PartitionNemesis::heal_locked() {
  if (!fault_) return;
  ctx_.net.heal();
  ctx_.log.record("heal", {{"fault", *fault_}});
  fault_.reset();
  until_.reset();
  show_locked();
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
