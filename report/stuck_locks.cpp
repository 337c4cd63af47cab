#include "report/stuck_locks.h"

#include <algorithm>
#include <map>

namespace fencecheck::report {

std::vector<StuckLock> stuck_locks(const Timeline& t, std::uint64_t min_refused) {
  std::map<std::string, std::vector<const Hold*>> holds_of;
  for (const Hold& h : t.holds) holds_of[h.key].push_back(&h);
  // Whether some hold of `key` overlaps [a, b]: then the lock was someone's in between.
  auto held_within = [&](const std::string& key, Nanos a, Nanos b) {
    auto it = holds_of.find(key);
    if (it == holds_of.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [&](const Hold* h) { return h->start <= b && h->end >= a; });
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
