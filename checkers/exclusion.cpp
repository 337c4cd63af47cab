// exclusion: holds of one key by different processes must not overlap (DESIGN.md).
//
// A hold starts when an acquire completes ok and ends at the invoke of the holder's next
// release of that key, else at the invoke of the op whose info retired the holder, else at
// the last line of the history. Holds are sorted by start per key and swept once, keeping
// the two latest-ending holds of distinct processes seen so far: O(n log n).
#include <algorithm>
#include <optional>

#include "checkers/safety.h"
#include "checkers/tracking.h"

namespace fencecheck {
namespace {

enum class HoldEnd : std::uint8_t { kRelease, kRetired, kEndOfHistory };

struct Hold {
  std::uint32_t key;
  std::uint32_t node;
  std::int64_t process;
  Nanos start;
  Nanos end;
  std::uint64_t acquire_index;
  std::uint64_t end_index;  // the release or retiring op's invoke; unused at end of history
  std::optional<Token> token;
  HoldEnd end_kind;
};

class ExclusionChecker : public Checker {
 public:
  explicit ExclusionChecker(const CheckOptions& o) : max_violations_(o.max_violations) {}

  void observe(const Event& e) override {
    last_time_ = e.time;
    if (e.is_nemesis()) return;
    InFlightInvokes::Invoke inv = invokes_.observe(e);
    if (e.type == OpType::kInvoke && e.f == OpFn::kRelease) {
      close(e.process, keys_.id(e.key), e.time, e.index, HoldEnd::kRelease);
    } else if (e.type == OpType::kInfo) {
      close(e.process, std::nullopt, inv.time, inv.index, HoldEnd::kRetired);
    } else if (e.type == OpType::kOk && e.f == OpFn::kAcquire) {
      open_[e.process].push_back(Hold{keys_.id(e.key), nodes_.id(e.node), e.process, e.time, 0,
                                      e.index, 0, e.token, HoldEnd::kEndOfHistory});
    }
  }

  CheckResult finish() override {
    for (auto& [process, holds] : open_) {
      for (Hold& h : holds) {
        h.end = last_time_;
        done_.push_back(h);
      }
    }
    open_.clear();
    std::sort(done_.begin(), done_.end(), [](const Hold& a, const Hold& b) {
      return a.key != b.key ? a.key < b.key : a.start < b.start;
    });
    CheckResult r;
    std::vector<std::pair<const Hold*, const Hold*>> found;  // (earlier, later), first few per key
    for (std::size_t i = 0; i < done_.size();) {
      std::size_t j = i;
      while (j < done_.size() && done_[j].key == done_[i].key) ++j;
      r.count += sweep_key(i, j, found);
      i = j;
    }
    std::sort(found.begin(), found.end(),
              [](const auto& a, const auto& b) { return a.second->start < b.second->start; });
    if (found.size() > max_violations_) found.resize(max_violations_);
    if (!found.empty()) r.first_violation_at = found.front().second->start;
    for (const auto& [a, b] : found) r.violations.push_back(violation_json(*a, *b));
    r.verdict = r.count == 0 ? Verdict::kValid : Verdict::kInvalid;
    r.stats = {{"holds", done_.size()}, {"keys", keys_.size()}};
    if (done_.empty()) {
      r.verdict = Verdict::kSkipped;
      r.summary = "no acquire completed ok: no hold to judge";
      return r;
    }
    r.summary = r.count == 0 ? std::to_string(done_.size()) + " holds on " +
                                   std::to_string(keys_.size()) + " key(s), none overlapping"
                             : sentence(*found.front().first, *found.front().second);
    return r;
  }

 private:
  // Closes the open holds of `process` (on `key`, or on every key when nullopt).
  void close(std::int64_t process, std::optional<std::uint32_t> key, Nanos end,
             std::uint64_t end_index, HoldEnd kind) {
    auto it = open_.find(process);
    if (it == open_.end()) return;
    auto& holds = it->second;
    auto keep = std::partition(holds.begin(), holds.end(),
                               [&](const Hold& h) { return key && h.key != *key; });
    for (auto h = keep; h != holds.end(); ++h) {
      h->end = end;
      h->end_index = end_index;
      h->end_kind = kind;
      done_.push_back(*h);
    }
    holds.erase(keep, holds.end());
    if (holds.empty()) open_.erase(it);
  }

  // The latest-ending hold seen so far, and the latest-ending one of another process, so
  // that a hold always finds a partner of a different process if one overlaps it.
  struct Latest {
    const Hold* best = nullptr;
    const Hold* other = nullptr;  // latest end among processes != best->process
    void add(const Hold* h) {
      if (best == nullptr || h->end > best->end) {
        if (best != nullptr && best->process != h->process) other = best;
        best = h;
      } else if (h->process != best->process && (other == nullptr || h->end > other->end)) {
        other = h;
      }
    }
    const Hold* partner_of(const Hold& h) const { return best && best->process != h.process ? best : other; }
  };

  // Holds [i, j) of one key, sorted by start. Holds starting at the same instant are a
  // group: only strictly earlier starts go into `before`, since equal starts overlap only
  // when both holds are non-empty.
  std::uint64_t sweep_key(std::size_t i, std::size_t j,
                          std::vector<std::pair<const Hold*, const Hold*>>& found) {
    std::uint64_t count = 0;
    std::size_t kept = 0;
    Latest before;
    for (std::size_t g = i; g < j;) {
      std::size_t h = g;
      while (h < j && done_[h].start == done_[g].start) ++h;
      Latest group;
      for (std::size_t k = g; k < h; ++k) {
        if (done_[k].end > done_[k].start) group.add(&done_[k]);
      }
      for (std::size_t k = g; k < h; ++k) {
        const Hold& cur = done_[k];
        const Hold* partner = before.partner_of(cur);
        if (partner == nullptr || partner->end <= cur.start) partner = nullptr;
        if (partner == nullptr && cur.end > cur.start) partner = group.partner_of(cur);
        if (partner == nullptr) continue;
        ++count;
        if (kept++ < max_violations_) found.emplace_back(partner, &cur);
      }
      for (std::size_t k = g; k < h; ++k) before.add(&done_[k]);
      g = h;
    }
    return count;
  }

  nlohmann::json hold_json(const Hold& h) const {
    static constexpr const char* kEnds[] = {"release", "retired", "end-of-history"};
    nlohmann::json j = {{"process", h.process},      {"node", nodes_.name(h.node)},
                        {"acquire_index", h.acquire_index}, {"start", h.start},
                        {"end", h.end},              {"ended_by", kEnds[static_cast<int>(h.end_kind)]},
                        {"token", h.token ? nlohmann::json(*h.token) : nlohmann::json()}};
    if (h.end_kind != HoldEnd::kEndOfHistory) j["end_index"] = h.end_index;
    return j;
  }

  nlohmann::json violation_json(const Hold& a, const Hold& b) const {
    return {{"key", keys_.name(a.key)}, {"held", hold_json(a)}, {"acquired", hold_json(b)},
            {"message", sentence(a, b)}};
  }

  std::string sentence(const Hold& a, const Hold& b) const {
    std::string until = a.end_kind == HoldEnd::kEndOfHistory
                            ? "until the end of the history at " + format_seconds(a.end)
                            : "to " + format_seconds(a.end);
    return describe_process(a.process, nodes_.name(a.node)) + " held " + keys_.name(a.key) +
           " from " + format_seconds(a.start) + " " + until + " while " +
           describe_process(b.process, nodes_.name(b.node)) + " acquired it at " +
           format_seconds(b.start);
  }

  std::size_t max_violations_;
  Interner keys_;
  Interner nodes_;
  InFlightInvokes invokes_;
  std::unordered_map<std::int64_t, std::vector<Hold>> open_;
  std::vector<Hold> done_;
  Nanos last_time_ = 0;
};

}  // namespace

std::unique_ptr<Checker> make_exclusion_checker(const CheckOptions& options) {
  return std::make_unique<ExclusionChecker>(options);
}

}  // namespace fencecheck
