#include "bench/linear/simulated_history.h"

#include <algorithm>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace fencecheck::bench {

namespace {
constexpr std::int64_t kNobody = -1;
}

struct SimulatedHistory::Impl {
  enum class Step { kInvoke, kEffect, kComplete };
  struct Client {
    std::int64_t process;
    int key = 0;
    OpFn f = OpFn::kAcquire;
    OpType outcome = OpType::kOk;
    bool info = false;
    bool holds = false;
    int value = 0;  // written, or read
  };
  struct Timer {
    Nanos time;
    std::uint64_t seq;
    int client;
    Step step;
    bool operator>(const Timer& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  SimulationConfig cfg;
  std::mt19937_64 rng;
  std::vector<Client> clients;
  std::vector<std::int64_t> holder;  // per key
  std::vector<int> value;            // per key, -1 = null
  std::vector<bool> info_op;         // per op number
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;
  std::uint64_t seq = 0, invoked = 0, index = 0;
  std::int64_t next_process;

  explicit Impl(const SimulationConfig& c)
      : cfg(c), rng(c.seed), holder(static_cast<std::size_t>(c.keys), kNobody),
        value(static_cast<std::size_t>(c.keys), -1), info_op(c.ops, false), next_process(c.processes) {
    std::uint64_t among = c.info_among_first > 0 ? std::min(c.info_among_first, c.ops) : c.ops;
    for (std::uint64_t chosen = 0; chosen < std::min(c.info_ops, among);) {
      std::uint64_t k = rng() % among;
      if (!info_op[k]) {
        info_op[k] = true;
        ++chosen;
      }
    }
    for (int i = 0; i < c.processes; ++i) {
      clients.push_back(Client{i});
      schedule(uniform(0, 50'000), i, Step::kInvoke);
    }
  }

  Nanos uniform(Nanos lo, Nanos hi) { return std::uniform_int_distribution<Nanos>(lo, hi)(rng); }
  void schedule(Nanos t, int client, Step s) { timers.push(Timer{t, seq++, client, s}); }

  Event make(const Client& c, Nanos t, OpType type) {
    Event e;
    e.index = index++;
    e.line = e.index + 1;
    e.time = t;
    e.process = c.process;
    e.type = type;
    e.f = c.f;
    e.f_name = to_string(c.f);
    e.key = "k" + std::to_string(c.key);
    if (c.f == OpFn::kRelease) e.value = R"({"token":null})";
    if (c.f == OpFn::kWrite) e.value = R"({"token":null,"value":)" + std::to_string(c.value) + "}";
    if (c.f == OpFn::kAcquire && type == OpType::kOk) e.value = R"({"token":null})";
    if (c.f == OpFn::kRead && type == OpType::kOk) e.value = c.value < 0 ? "null" : std::to_string(c.value);
    if (e.value.empty()) e.value = "null";
    return e;
  }

  // Applies the op to the object; false when a blocking acquire must wait.
  bool effect(Client& c) {
    auto k = static_cast<std::size_t>(c.key);
    bool takes_effect = !c.info || c.f == OpFn::kRelease || (c.f == OpFn::kWrite && rng() % 2 == 0);
    if (c.f == OpFn::kAcquire && c.info) takes_effect = false;
    c.outcome = c.info ? OpType::kInfo : OpType::kOk;
    switch (c.f) {
      case OpFn::kAcquire:
        if (takes_effect && holder[k] == kNobody) {
          holder[k] = c.process;
          c.holds = true;
        } else if (takes_effect && cfg.blocking_acquire && invoked < cfg.ops) {
          return false;  // try again later; once no release can come any more, give up
        } else if (!c.info) {
          c.outcome = OpType::kFail;
        }
        break;
      case OpFn::kRelease:
        if (takes_effect) holder[k] = kNobody;
        c.holds = false;
        break;
      case OpFn::kWrite:
        if (takes_effect) value[k] = c.value;
        break;
      default: c.value = value[k]; break;  // read
    }
    return true;
  }

  bool next(Event& out) {
    while (!timers.empty()) {
      Timer t = timers.top();
      timers.pop();
      Client& c = clients[static_cast<std::size_t>(t.client)];
      if (t.step == Step::kInvoke) {
        if (invoked == cfg.ops) continue;
        c.info = info_op[invoked++];
        if (cfg.object == SimulationConfig::Object::kMutex) {
          c.f = c.holds ? OpFn::kRelease : OpFn::kAcquire;
          if (!c.holds) c.key = static_cast<int>(rng() % static_cast<std::uint64_t>(cfg.keys));
        } else {
          c.key = static_cast<int>(rng() % static_cast<std::uint64_t>(cfg.keys));
          c.f = rng() % 2 ? OpFn::kWrite : OpFn::kRead;
          if (c.f == OpFn::kWrite) c.value = static_cast<int>(rng() % static_cast<std::uint64_t>(cfg.register_values));
        }
        schedule(t.time + uniform(1'000, 50'000), t.client, Step::kEffect);
        out = make(c, t.time, OpType::kInvoke);
        return true;
      }
      if (t.step == Step::kEffect) {
        if (effect(c)) {
          schedule(t.time + uniform(1'000, 50'000), t.client, Step::kComplete);
        } else {
          schedule(t.time + uniform(1'000, 20'000), t.client, Step::kEffect);
        }
        continue;
      }
      out = make(c, t.time, c.outcome);
      if (c.outcome == OpType::kInfo) {  // the worker goes on under a new process number
        c.process = next_process++;
        c.holds = false;
      }
      Nanos pause = c.holds ? uniform(1'000, 100'000) : uniform(0, 20'000);
      schedule(t.time + pause, t.client, Step::kInvoke);
      return true;
    }
    return false;
  }
};

SimulatedHistory::SimulatedHistory(const SimulationConfig& config) : impl_(std::make_unique<Impl>(config)) {}
SimulatedHistory::~SimulatedHistory() = default;
bool SimulatedHistory::next(Event& out) { return impl_->next(out); }

}  // namespace fencecheck::bench
