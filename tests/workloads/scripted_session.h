// ScriptedSession: a ClientSession whose ops complete as a script says, with no worker.
// It logs every op and every sleep, and reports running() == false once `budget` ops
// have been invoked, so a workload loop ends after its current cycle. Single-threaded.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
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
  // The same, also given the fence the op shows the resource (invoke's `fence`).
  using FencedScript = std::function<OpResult(OpFn, const std::string&, const nlohmann::json&, std::size_t,
                                              std::optional<std::int64_t>)>;

  ScriptedSession(Script script, std::size_t budget)
      : script_([s = std::move(script)](OpFn f, const std::string& k, const nlohmann::json& v, std::size_t n,
                                        std::optional<std::int64_t>) { return s(f, k, v, n); }),
        budget_(budget) {}
  static ScriptedSession with_fences(FencedScript script, std::size_t budget) {
    return ScriptedSession(std::move(script), budget, 0);
  }

  OpResult invoke(OpFn f, const std::string& key, const nlohmann::json& value,
                  std::optional<std::int64_t> fence = std::nullopt) override {
    fences.push_back(fence);
    // A workload that ignores running() would loop forever; fail loudly instead.
    if (ops.size() > budget_ + 16) throw std::logic_error("workload kept going after running() turned false");
    OpResult r = script_(f, key, value, ops.size(), fence);
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
  std::uint64_t unique_element() override { return elements_ != nullptr ? (*elements_)++ : next_element_++; }
  // Sessions of one simulated run share a counter, as a run's clients do.
  void share_elements(std::uint64_t* counter) { elements_ = counter; }

  std::vector<LoggedOp> ops;
  std::vector<std::optional<std::int64_t>> fences;  // fences[i]: the fence of op i
  // sleeps_after[i]: the sleeps between op i and op i+1.
  std::vector<std::vector<std::chrono::milliseconds>> sleeps_after;

 private:
  ScriptedSession(FencedScript script, std::size_t budget, int)
      : script_(std::move(script)), budget_(budget) {}

  FencedScript script_;
  std::size_t budget_;
  std::mt19937_64 rng_{12345};
  std::uint64_t next_element_ = 100;
  std::uint64_t* elements_ = nullptr;
};

inline OpResult ok(nlohmann::json v = nullptr) { return {OpType::kOk, std::move(v), ""}; }
inline OpResult fail() { return {OpType::kFail, nullptr, "refused"}; }
inline OpResult info() { return {OpType::kInfo, nullptr, "timed out"}; }

// A well-behaved service: acquires grant increasing tokens, reads return what was last
// written to the key (null before any write), writes and releases succeed. Fenced, it is
// the fenced resource's rule (harness/resource/fenced_store.h): per key, a read or write
// whose token is below the highest accepted fails, an accepted one raises it.
class FakeService {
 public:
  explicit FakeService(bool fenced = false) : fenced_(fenced) {}

  OpResult operator()(OpFn f, const std::string& key, const nlohmann::json& value, std::size_t,
                      std::optional<std::int64_t> fence) {
    switch (f) {
      case OpFn::kAcquire: return ok({{"token", ++token_}});
      case OpFn::kRead:
        if (!admit(key, fence)) return fail();
        return ok(data_.contains(key) ? data_[key] : nlohmann::json());
      case OpFn::kWrite: {
        std::optional<std::int64_t> token;
        if (value["token"].is_number_integer()) token = value["token"].get<std::int64_t>();
        if (!admit(key, token)) return fail();
        data_[key] = value["value"];
        written_.push_back(key);
        return ok(value);
      }
      default: return ok(value);
    }
  }
  OpResult operator()(OpFn f, const std::string& key, const nlohmann::json& value, std::size_t n) {
    return (*this)(f, key, value, n, std::nullopt);
  }
  // What a final read of key returns (null when never written).
  nlohmann::json value_of(const std::string& key) const {
    return data_.contains(key) ? data_[key] : nlohmann::json();
  }
  const std::vector<std::string>& keys_written() const { return written_; }  // one per accepted write

 private:
  bool admit(const std::string& key, std::optional<std::int64_t> token) {
    if (!fenced_ || !token) return true;
    auto [it, fresh] = highest_.try_emplace(key, *token);
    if (!fresh && *token < it->second) return false;
    it->second = std::max(it->second, *token);
    return true;
  }

  bool fenced_;
  std::int64_t token_ = 0;
  nlohmann::json data_ = nlohmann::json::object();
  std::map<std::string, std::int64_t> highest_;
  std::vector<std::string> written_;
};

}  // namespace fencecheck::testing
