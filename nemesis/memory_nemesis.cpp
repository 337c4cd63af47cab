#include "nemesis/memory_nemesis.h"

#include <stdexcept>

namespace fencecheck {

namespace {

constexpr const char* kMemoryPressure = "memory-pressure";
constexpr const char* kMemoryRelieved = "memory-relieved";

}  // namespace

MemoryNemesis::MemoryNemesis(NemesisContext& ctx, const FaultOptions& options) : ctx_(ctx), options_(options) {}

MemoryNemesis::~MemoryNemesis() {
  stop_ = true;
  std::lock_guard lock(mu_);
  if (fill_ && fill_->thread.joinable()) fill_->thread.join();
}

void MemoryNemesis::start(const std::string& fault, std::mt19937_64& rng) {
  if (fault != kMemoryPressure) throw std::invalid_argument("MemoryNemesis cannot start fault \"" + fault + "\"");
  std::lock_guard lock(mu_);
  if (fill_) return;
  const std::vector<std::string> nodes = ctx_.servers.nodes();
  if (nodes.empty()) return;
  press_locked(nodes[rng() % nodes.size()], options_.ms("pause-ms"));
}

void MemoryNemesis::replay(const std::string& f, const nlohmann::json& value) {
  const std::string fault = value.at("fault").get<std::string>();
  if (fault != kMemoryPressure) throw std::invalid_argument("the memory family has no fault \"" + fault + "\"");
  if (f == kMemoryPressure) {
    std::lock_guard lock(mu_);
    if (!fill_) {
      press_locked(value.at("targets").at(0).get<std::string>(),
                   std::chrono::milliseconds(value.at("ms").get<std::int64_t>()));
    }
  } else if (f != kMemoryRelieved) {
    throw std::invalid_argument("the memory family cannot replay \"" + f + "\"");
  }
}

void MemoryNemesis::press_locked(const std::string& node, std::chrono::milliseconds ms) {
  ctx_.log.record(kMemoryPressure, {{"fault", kMemoryPressure}, {"targets", {node}}, {"ms", ms.count()}});
  status_.show({std::string(kMemoryPressure) + " " + node});
  stop_ = false;
  fill_.emplace();
  fill_->node = node;
  fill_->ms = ms;
  fill_->until = ctx_.time.now() + ms;
  const Deadline deadline = Deadline::after(ms, [this, i = ctx_.interrupted] { return stop_.load() || i(); });
  Fill* fill = &*fill_;
  fill->thread = std::thread([this, fill, deadline] {
    try {
      fill->result = ctx_.servers.press_memory(fill->node, deadline);
    } catch (const std::exception& e) {
      fill->failure = e.what();
    }
  });
}

// Joins the fill (done by its deadline plus one exchange, ≤ 2 s) and records what it did.
void MemoryNemesis::relieve_locked() {
  if (!fill_) return;
  if (fill_->thread.joinable()) fill_->thread.join();
  const Fill fill = std::move(*fill_);
  fill_.reset();
  status_.clear();
  nlohmann::json value = {{"fault", kMemoryPressure}, {"targets", {fill.node}}};
  if (!fill.failure.empty()) {
    value["not_applied"] = fill.failure;
    ctx_.log.record(kMemoryRelieved, value);
    throw HarnessError("memory-pressure on " + fill.node + ": " + fill.failure);
  }
  if (!fill.result) {
    value["not_applied"] = "the server was down or paused";
  } else {
    value["stored"] = fill.result->stored;
    value["refused"] = fill.result->refused;
    value["evictions"] = fill.result->evictions ? nlohmann::json(*fill.result->evictions) : nlohmann::json();
    if (!fill.result->error.empty()) value["ended_early"] = fill.result->error;
  }
  ctx_.log.record(kMemoryRelieved, value);
}

void MemoryNemesis::tick() {
  std::lock_guard lock(mu_);
  if (fill_ && ctx_.time.now() >= fill_->until) relieve_locked();
}

std::optional<TimeSource::Instant> MemoryNemesis::due() const {
  std::lock_guard lock(mu_);
  if (!fill_) return std::nullopt;
  return fill_->until;
}

void MemoryNemesis::heal() {
  stop_ = true;
  std::lock_guard lock(mu_);
  relieve_locked();
}

std::unique_ptr<Nemesis> make_memory_nemesis(NemesisContext& ctx, const FaultOptions& options) {
  return std::make_unique<MemoryNemesis>(ctx, options);
}

}  // namespace fencecheck
