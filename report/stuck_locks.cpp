#include "report/stuck_locks.h"

#include <algorithm>
#include <map>

namespace fencecheck::report {

std::vector<StuckLock> stuck_locks(const Timeline& t, std::uint64_t min_refused) {
  // Per key, its holds' starts in order and the latest end among the holds so far: a hold
  // overlaps [a, b] exactly when one starting by b ends at or after a.
  struct KeyHolds {
    std::vector<Nanos> starts, latest_end;
  };
  std::map<std::string, KeyHolds> holds_of;
  for (const Hold& h : t.holds) {  // in start order (timeline.h)
    KeyHolds& k = holds_of[h.key];
    k.starts.push_back(h.start);
    k.latest_end.push_back(k.latest_end.empty() ? h.end : std::max(k.latest_end.back(), h.end));
  }
  // Whether some hold of `key` overlaps [a, b]: then the lock was someone's in between.
  auto held_within = [&](const std::string& key, Nanos a, Nanos b) {
    auto it = holds_of.find(key);
    if (it == holds_of.end()) return false;
    const KeyHolds& k = it->second;
    const auto started = std::upper_bound(k.starts.begin(), k.starts.end(), b) - k.starts.begin();
    return started > 0 && k.latest_end[static_cast<std::size_t>(started - 1)] >= a;
  };
  std::map<std::string, StuckLock> longest;
  std::map<std::string, StuckLock> current;  // the stretch being extended, per key
  auto close = [&](const std::string& key) {
    auto it = current.find(key);
    if (it == current.end()) return;
    const StuckLock& s = it->second;
    if (s.refused >= min_refused) {
      auto [best, added] = longest.emplace(key, s);
      if (!added && s.to - s.from > best->second.to - best->second.from) best->second = s;
    }
    current.erase(it);
  };
  // Refused acquires in invoke order; a stretch grows while no hold of its key overlaps it.
  for (const TimelineOp& op : t.ops) {
    if (op.f != OpFn::kAcquire || op.outcome != OpType::kFail || op.complete < 0) continue;
    auto it = current.find(op.key);
    if (it != current.end() && held_within(op.key, it->second.from, op.complete)) close(op.key);
    if (held_within(op.key, op.invoke, op.complete)) continue;  // refused while someone held it: expected
    StuckLock& s = current.try_emplace(op.key, StuckLock{op.key, op.invoke, op.complete, 0}).first->second;
    s.to = std::max(s.to, op.complete);
    ++s.refused;
  }
  std::vector<std::string> keys;
  for (const auto& [key, s] : current) keys.push_back(key);
  for (const std::string& key : keys) close(key);
  std::vector<StuckLock> out;
  for (auto& [key, s] : longest) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const StuckLock& a, const StuckLock& b) { return a.to - a.from > b.to - b.from; });
  return out;
}

}  // namespace fencecheck::report
