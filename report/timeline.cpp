#include "report/timeline.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "checkers/bounded.h"

namespace fencecheck::report {

namespace {

constexpr std::size_t kValueChars = 120;

// The start line each end line closes, by f.
const std::map<std::string, std::string, std::less<>> kEnds = {
    {"resume", "pause"},
    {"heal", "partition"},
    {"clock-reset", "clock-bump"},
    {"start", "kill"},
    {"memory-relieved", "memory-pressure"}};
bool is_start(std::string_view f) {
  return f == "pause" || f == "partition" || f == "clock-bump" || f == "clock-strobe" || f == "kill" ||
         f == "memory-pressure";
}

// "c1, c2": the nodes a nemesis value names (targets, or the keys of offsets/deltas, or
// the nodes a grudge cuts off).
std::string targets_of(const nlohmann::json& v) {
  std::vector<std::string> nodes;
  auto add = [&](const std::string& n) {
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  };
  if (v.contains("targets")) {
    const nlohmann::json& t = v["targets"];
    if (t.is_string()) add(t.get<std::string>());
    if (t.is_array()) {
      for (const auto& n : t) {
        if (n.is_string()) add(n.get<std::string>());
      }
    }
  }
  for (const char* field : {"deltas", "offsets", "grudge"}) {
    if (!v.contains(field) || !v[field].is_object()) continue;
    for (const auto& [node, x] : v[field].items()) {
      if (!(x.is_array() && x.empty())) add(node);
    }
    break;
  }
  std::string s;
  for (const auto& n : nodes) s += (s.empty() ? "" : ", ") + n;
  return s;
}

class Builder {
 public:
  void observe(const Event& e) {
    t.event_times.push_back(e.time);
    t.end_time = e.time;
    if (e.is_nemesis()) return nemesis(e);
    if (e.is_notice()) return notice(e);
    if (e.type == OpType::kInvoke) return invoke(e);
    complete(e);
  }

  Timeline finish() {
    for (auto& [process, holds] : open_) {
      for (std::size_t h : holds) close(h, t.end_time, "end-of-history");
    }
    std::stable_sort(t.holds.begin(), t.holds.end(), [](const Hold& a, const Hold& b) { return a.start < b.start; });
    for (auto& [fault, w] : open_faults_) {
      t.faults[w].end = t.end_time;
      t.faults[w].open_at_end = true;
    }
    return std::move(t);
  }

 private:
  void invoke(const Event& e) {
    pending_[e.process] = t.ops.size();
    TimelineOp op;
    op.process = e.process;
    op.f = e.f;
    op.invoke = e.time;
    op.invoke_index = e.index;
    op.key = e.key;
    op.node = e.node;
    op.value = bounded_text(e.value, kValueChars);
    t.ops.push_back(std::move(op));
    if (e.f == OpFn::kRelease) {
      auto& holds = open_[e.process];
      std::erase_if(holds, [&](std::size_t h) {
        if (t.holds[h].key != e.key) return false;
        close(h, e.time, "release");
        return true;
      });
    }
  }

  void complete(const Event& e) {
    auto it = pending_.find(e.process);
    if (it == pending_.end()) return;  // the validator rules this out
    TimelineOp& op = t.ops[it->second];
    pending_.erase(it);
    op.outcome = e.type;
    op.complete = e.time;
    op.complete_index = e.index;
    if (e.value != "null") op.value = bounded_text(e.value, kValueChars);
    op.error = e.error;
    if (e.type == OpType::kOk) t.oks.push_back({e.time, e.f});
    if (e.type == OpType::kOk && e.f == OpFn::kAcquire) {
      open_[e.process].push_back(t.holds.size());
      t.holds.push_back(Hold{e.process, e.key, e.node, e.time, 0, "", e.index, e.token});
    }
    if (e.type == OpType::kInfo) {  // retired: its holds end when the unknown op began
      for (std::size_t h : open_[e.process]) close(h, op.invoke, "retired");
      open_.erase(e.process);
    }
  }

  // The library told the process it lost the key: its hold of that key ends here.
  void notice(const Event& e) {
    t.notices.push_back({e.time, e.process, e.f, e.key, e.node});
    if (e.f != OpFn::kLost) return;
    auto& holds = open_[e.process];
    std::erase_if(holds, [&](std::size_t h) {
      if (t.holds[h].key != e.key) return false;
      close(h, e.time, "lost");
      return true;
    });
  }

  void close(std::size_t h, Nanos end, const char* why) {
    t.holds[h].end = end;
    t.holds[h].ended_by = why;
  }

  void nemesis(const Event& e) {
    nlohmann::json v = nlohmann::json::parse(e.value, nullptr, false);
    std::string fault = v.is_object() && v.contains("fault") && v["fault"].is_string()
                            ? v["fault"].get<std::string>()
                            : "";
    auto end = kEnds.find(e.f_name);
    if (end != kEnds.end()) {
      auto w = open_faults_.find(fault.empty() ? end->second : fault);
      if (w != open_faults_.end()) {
        FaultWindow& f = t.faults[w->second];
        f.end = e.time;
        f.ended_by = e.f_name;
        f.end_index = e.index;
        open_faults_.erase(w);
        return;
      }
    } else if (is_start(e.f_name) && !(v.is_object() && v.contains("not_applied"))) {
      // A fault recorded as not applied (its target was down) opened nothing: a mark.
      const std::string name = fault.empty() ? e.f_name : fault;
      if (open_faults_.count(name) != 0) return;  // a second bump while the first is in force
      open_faults_[name] = t.faults.size();
      FaultWindow f;
      f.fault = name;
      f.began_by = e.f_name;
      f.start = f.end = e.time;
      f.targets = v.is_object() ? targets_of(v) : "";
      f.value = bounded_text(e.value, kValueChars);
      f.start_index = e.index;
      t.faults.push_back(std::move(f));
      return;
    }
    t.marks.push_back({e.time, e.f_name, bounded_text(e.value, kValueChars), e.index});
  }

  Timeline t;
  std::unordered_map<std::int64_t, std::size_t> pending_;             // process -> op in flight
  std::unordered_map<std::int64_t, std::vector<std::size_t>> open_;   // process -> open holds
  std::map<std::string, std::size_t> open_faults_;                     // fault -> window
};

}  // namespace

Timeline build_timeline(EventSource& history, ResourceLogReader* resource) {
  Builder b;
  Event e;
  while (history.next(e)) b.observe(e);
  Timeline t = b.finish();
  t.warnings = history.warnings();
  if (resource != nullptr) {
    ResourceEntry r;
    while (resource->next(r)) {
      r.value = bounded_text(r.value, kValueChars);  // a lock-append list grows with the run
      t.resource.push_back(r);
    }
    for (const auto& w : resource->warnings()) t.warnings.push_back(w);
  }
  return t;
}

Timeline read_timeline(const std::filesystem::path& run_dir) {
  HistoryReader history((run_dir / "history.jsonl").string());
  std::error_code ec;
  if (!std::filesystem::exists(run_dir / "resource.jsonl", ec)) return build_timeline(history, nullptr);
  ResourceLogReader resource((run_dir / "resource.jsonl").string());
  return build_timeline(history, &resource);
}

}  // namespace fencecheck::report
