// Test helper: builds histories event by event, as the JSONL reader would hand them to a
// checker, and runs the linearizable checker over them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/checker.h"
#include "checkers/history.h"
#include "checkers/linear/linearizable_checker.h"

namespace fencecheck::testing {

class TestHistory {
 public:
  // Invoke of f by process p at time t on the current key; value is JSON text.
  TestHistory& inv(Nanos t, std::int64_t p, const std::string& f, const std::string& value = "null",
                   const std::string& key = "k") {
    Event e = base(t, p, OpType::kInvoke, value);
    e.f = *find_op(f);
    e.f_name = f;
    e.key = key;
    open_[p] = e;
    events.push_back(decode(std::move(e)));
    return *this;
  }
  TestHistory& ok(Nanos t, std::int64_t p, const std::string& value = "") { return done(t, p, OpType::kOk, value); }
  TestHistory& fail(Nanos t, std::int64_t p) { return done(t, p, OpType::kFail, ""); }
  TestHistory& info(Nanos t, std::int64_t p) { return done(t, p, OpType::kInfo, ""); }
  TestHistory& nemesis(Nanos t, const std::string& f) {
    Event e = base(t, kNemesisProcess, OpType::kInfo, "null");
    e.f_name = f;
    events.push_back(std::move(e));
    return *this;
  }

  std::vector<Event> events;

 private:
  Event base(Nanos t, std::int64_t p, OpType type, const std::string& value) {
    Event e;
    e.index = events.size();
    e.line = events.size() + 1;
    e.time = t;
    e.process = p;
    e.type = type;
    e.value = value;
    return e;
  }
  // A completion repeats the invoke's f and key; value "" repeats the invoke's value for
  // release/write/cas (as the history format says) and is null otherwise.
  TestHistory& done(Nanos t, std::int64_t p, OpType type, const std::string& value) {
    const Event& invoke = open_.at(p);
    bool repeats = invoke.f == OpFn::kRelease || invoke.f == OpFn::kWrite || invoke.f == OpFn::kCas;
    std::string v = !value.empty() ? value : (repeats ? invoke.value : "null");
    if (type != OpType::kOk && !repeats) v = "null";
    Event e = base(t, p, type, v);
    e.f = invoke.f;
    e.f_name = invoke.f_name;
    e.key = invoke.key;
    open_.erase(p);
    events.push_back(decode(std::move(e)));
    return *this;
  }
  static Event decode(Event e) {
    auto j = nlohmann::json::parse(e.value);
    if (j.is_object() && j.contains("token") && j["token"].is_number_integer()) e.token = j["token"].get<Token>();
    return e;
  }
  std::map<std::int64_t, Event> open_;
};

inline CheckResult check_linearizable(const std::vector<Event>& events, const std::string& model = "",
                                      double time_limit_s = 30, std::size_t memory_limit = std::size_t{1} << 30,
                                      unsigned threads = 2) {
  CheckOptions opts;
  opts.model = model;
  opts.time_limit_s = time_limit_s;
  opts.memory_limit_bytes = memory_limit;
  auto checker = make_linearizable_checker_on_threads(opts, threads);
  for (const Event& e : events) checker->observe(e);
  return checker->finish();
}

}  // namespace fencecheck::testing
