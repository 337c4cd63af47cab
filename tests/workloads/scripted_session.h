// ScriptedSession: a ClientSession whose ops complete as a script says, with no worker.
// It logs every op and every sleep, and reports running() == false once `budget` ops
// have been invoked, so a workload loop ends after its current cycle. Single-threaded.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/workload.h"

namespace fencecheck::testing {

struct LoggedOp {
  OpFn f;
  std::string key;
  nlohmann::json value;  // the invoke's value
  OpType outcome;
};

class ScriptedSession : public ClientSession {
 public:
  // script(f, key, value, n): the completion of the n-th op (0-based).
  using Script = std::function<OpResult(OpFn, const std::string&, const nlohmann::json&, std::size_t)>;

  ScriptedSession(Script script, std::size_t budget) : script_(std::move(script)), budget_(budget) {}

  OpResult invoke(OpFn f, const std::string& key, const nlohmann::json& value,
                  std::optional<std::int64_t> fence = std::nullopt) override {
    fences.push_back(fence);
    // A workload that ignores running() would loop forever; fail loudly instead.
    if (ops.size() > budget_ + 16) throw std::logic_error("workload kept going after running() turned false");
    OpResult r = script_(f, key, value, ops.size());
    ops.push_back({f, key, value, r.type});
    sleeps_after.emplace_back();
    return r;
  }
  bool running() const override { return ops.size() < budget_; }
  void sleep(std::chrono::milliseconds d) override {
    if (sleeps_after.empty()) sleeps_after.emplace_back();
    sleeps_after.back().push_back(d);
  }
  std::mt19937_64& rng() override { return rng_; }
  std::uint64_t unique_element() override { return next_element_++; }

  std::vector<LoggedOp> ops;
  std::vector<std::optional<std::int64_t>> fences;  // fences[i]: the fence of op i
  // sleeps_after[i]: the sleeps between op i and op i+1.
  std::vector<std::vector<std::chrono::milliseconds>> sleeps_after;

 private:
  Script script_;
  std::size_t budget_;
  std::mt19937_64 rng_{12345};
  std::uint64_t next_element_ = 100;
};

inline OpResult ok(nlohmann::json v = nullptr) { return {OpType::kOk, std::move(v), ""}; }
inline OpResult fail() { return {OpType::kFail, nullptr, "refused"}; }
inline OpResult info() { return {OpType::kInfo, nullptr, "timed out"}; }

// A well-behaved service: acquires grant increasing tokens, reads return what was last
// written to the key (null before any write), writes and releases succeed.
class FakeService {
 public:
  OpResult operator()(OpFn f, const std::string& key, const nlohmann::json& value, std::size_t) {
    switch (f) {
      case OpFn::kAcquire: return ok({{"token", ++token_}});
      case OpFn::kRead: return ok(data_.contains(key) ? data_[key] : nlohmann::json());
      case OpFn::kWrite: data_[key] = value["value"]; return ok(value);
      default: return ok(value);
    }
  }

 private:
  std::int64_t token_ = 0;
  nlohmann::json data_ = nlohmann::json::object();
};

}  // namespace fencecheck::testing
