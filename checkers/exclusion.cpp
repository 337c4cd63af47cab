// exclusion: holds of one key by different processes must not overlap (docs/checkers.md).
//
// A hold starts when an acquire completes ok and ends at the invoke of the holder's next
// release of that key, or at the holder's `lost` notice of that key (its library told it),
// else at the invoke of the op whose info retired the holder, else at the last line of the
// history. When the history has notices at all (a library that can say lost), each
// violation also says whether the earlier holder had been told. Each key's holds are swept in order of start, keeping the
// two latest-ending holds of distinct processes among those that started earlier: O(n log n)
// at worst, O(n) when holds do not pile up.
//
// Memory. Times never go backwards in file order (the readers enforce it; TimeOrderGuard
// checks it), so every hold still to come starts at or after the current line's time
// `now`, and holds arrive in order of start. A hold is judged, folded into the sweep's
// two-hold summary and forgotten as soon as every hold that started no later than it is
// known and closed: it started before `now` and before the key's oldest open hold. What is
// kept per key is therefore the summary, the first few violations, and the holds that
// started since the key's oldest open hold (or since the key's last event) — in a history
// without overlaps, about one hold per process holding the key, whatever the length of
// the history. A hold left open for long (a holder that never releases) keeps the holds of
// that key that started after it until it closes; in a valid history those are only the
// holder's own, or others' during a hung op of the holder that may still retire it.
#include <algorithm>
#include <deque>
#include <limits>
#include <optional>

#include "checkers/safety.h"
#include "checkers/tracking.h"

namespace fencecheck {
namespace {

enum class HoldEnd : std::uint8_t { kRelease, kRetired, kEndOfHistory, kLost };

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
  bool open;                  // end not known yet
  std::uint64_t closed_order;  // holds starting at the same instant are judged in this order
};

// The latest-ending hold seen so far, and the latest-ending one of another process, so
// that a hold always finds a partner of a different process if one overlaps it. Copies,
// so that the holds they summarise can be forgotten.
struct Latest {
  std::optional<Hold> best;
  std::optional<Hold> other;  // latest end among processes != best->process
  void add(const Hold& h) {
    if (!best || h.end > best->end) {
      if (best && best->process != h.process) other = best;
      best = h;
    } else if (h.process != best->process && (!other || h.end > other->end)) {
      other = h;
    }
  }
  const Hold* partner_of(const Hold& h) const {
    if (best && best->process != h.process) return &*best;
    return other ? &*other : nullptr;
  }
};

// One violation kept in detail: `held` overlapped `acquired`.
struct Found {
  Hold held;
  Hold acquired;
};

struct KeyHolds {
  std::deque<Hold> pending;  // not judged yet, in order of start
  std::uint64_t judged = 0;  // holds judged and dropped from the front of `pending`:
                             // a hold's sequence number minus `judged` is its position
  Latest before;             // every judged hold
  std::size_t kept = 0;      // violations of this key kept in detail
};

class ExclusionChecker : public Checker {
 public:
  explicit ExclusionChecker(const CheckOptions& o) : max_violations_(o.max_violations) {}

  void observe(const Event& e) override {
    last_time_ = time_order_.check(e);
    if (e.is_nemesis()) return;
    if (e.is_notice()) {
      if (e.f == OpFn::kLost) {
        said_lost_ = true;
        ++lost_notices_;
        close(e.process, keys_.id(e.key), e.time, e.index, HoldEnd::kLost);
      }
      return;
    }
    InFlightInvokes::Invoke inv = invokes_.observe(e);
    if (e.type == OpType::kInvoke && e.f == OpFn::kRelease) {
      close(e.process, keys_.id(e.key), e.time, e.index, HoldEnd::kRelease);
    } else if (e.type == OpType::kInfo) {
      close(e.process, std::nullopt, inv.time, inv.index, HoldEnd::kRetired);
    } else if (e.type == OpType::kOk && e.f == OpFn::kAcquire) {
      std::uint32_t key = keys_.id(e.key);
      KeyHolds& k = key_holds(key);
      open_[e.process].push_back({key, k.judged + k.pending.size()});
      k.pending.push_back(Hold{key, nodes_.id(e.node), e.process, e.time, 0, e.index, 0, e.token,
                               HoldEnd::kEndOfHistory, true, 0});
      ++holds_;
      kept_peak_ = std::max(kept_peak_, ++kept_now_);
      judge(key, e.time);
    }
  }

  CheckResult finish() override {
    for (auto& [process, holds] : open_) {
      for (const OpenHold& o : holds) {
        Hold& h = hold_at(o);
        h.end = last_time_;
        h.open = false;
        h.closed_order = closed_++;
      }
    }
    open_.clear();
    for (std::uint32_t key = 0; key < by_key_.size(); ++key) {
      judge(key, std::numeric_limits<Nanos>::max());
    }
    // The first few of each key, earliest acquired first; equal times in key order.
    std::stable_sort(found_.begin(), found_.end(), [](const Found& a, const Found& b) {
      return a.acquired.start != b.acquired.start ? a.acquired.start < b.acquired.start
                                                  : a.acquired.key < b.acquired.key;
    });
    if (found_.size() > max_violations_) found_.resize(max_violations_);
    CheckResult r;
    if (!found_.empty()) r.first_violation_at = found_.front().acquired.start;
    for (const Found& f : found_) r.violations.push_back(violation_json(f.held, f.acquired));
    r.count = count_;
    r.verdict = r.count == 0 ? Verdict::kValid : Verdict::kInvalid;
    r.stats = {{"holds", holds_}, {"keys", keys_.size()}, {"holds_kept_peak", kept_peak_}};
    // Lock libraries: how often they said `lost`, and how many violations' earlier holder
    // was told (always during the overlap: a notice before it would have ended the hold).
    if (said_lost_) r.stats.update({{"lost_notices", lost_notices_}, {"violations_told", told_}});
    if (holds_ == 0) {
      r.verdict = Verdict::kSkipped;
      r.summary = "no acquire completed ok: no hold to judge";
      return r;
    }
    r.summary = r.count == 0 ? std::to_string(holds_) + " holds on " + std::to_string(keys_.size()) +
                                   " key(s), none overlapping"
                             : sentence(found_.front().held, found_.front().acquired);
    return r;
  }

 private:
  struct OpenHold {
    std::uint32_t key;
    std::uint64_t seq;
  };

  KeyHolds& key_holds(std::uint32_t key) {
    if (key >= by_key_.size()) by_key_.resize(key + 1);
    return by_key_[key];
  }
  Hold& hold_at(const OpenHold& o) {
    KeyHolds& k = by_key_[o.key];
    return k.pending[o.seq - k.judged];
  }

  // Closes the open holds of `process` (on `key`, or on every key when nullopt).
  void close(std::int64_t process, std::optional<std::uint32_t> key, Nanos end,
             std::uint64_t end_index, HoldEnd kind) {
    auto it = open_.find(process);
    if (it == open_.end()) return;
    auto& holds = it->second;
    auto keep = std::partition(holds.begin(), holds.end(),
                               [&](const OpenHold& o) { return key && o.key != *key; });
    for (auto o = keep; o != holds.end(); ++o) {
      Hold& h = hold_at(*o);
      h.end = end;
      h.end_index = end_index;
      h.end_kind = kind;
      h.open = false;
      h.closed_order = closed_++;
    }
    for (auto o = keep; o != holds.end(); ++o) judge(o->key, last_time_);  // touches by_key_ only
    holds.erase(keep, holds.end());
    if (holds.empty()) open_.erase(it);
  }

  // Judges the holds of `key` at the front of its queue whose fate is sealed: every hold
  // starting at or before them is known (they started before `now`, the earliest start of
  // any hold still to come) and closed. Holds starting at the same instant are a group:
  // only strictly earlier starts are in `before`, since equal starts overlap only when
  // both holds are non-empty.
  void judge(std::uint32_t key, Nanos now) {
    KeyHolds& k = by_key_[key];
    while (!k.pending.empty() && k.pending.front().start < now) {
      const Nanos start = k.pending.front().start;
      std::size_t group_size = 0;
      bool closed = true;
      for (; group_size < k.pending.size() && k.pending[group_size].start == start; ++group_size) {
        closed = closed && !k.pending[group_size].open;
      }
      if (!closed) return;
      std::stable_sort(k.pending.begin(), k.pending.begin() + static_cast<std::ptrdiff_t>(group_size),
                       [](const Hold& a, const Hold& b) { return a.closed_order < b.closed_order; });
      judge_group(k, group_size);
      for (std::size_t i = 0; i < group_size; ++i) k.before.add(k.pending[i]);
      k.pending.erase(k.pending.begin(), k.pending.begin() + static_cast<std::ptrdiff_t>(group_size));
      k.judged += group_size;
      kept_now_ -= group_size;
    }
  }

  void judge_group(KeyHolds& k, std::size_t group_size) {
    Latest group;
    for (std::size_t i = 0; i < group_size; ++i) {
      if (k.pending[i].end > k.pending[i].start) group.add(k.pending[i]);
    }
    for (std::size_t i = 0; i < group_size; ++i) {
      const Hold& cur = k.pending[i];
      const Hold* partner = k.before.partner_of(cur);
      if (partner == nullptr || partner->end <= cur.start) partner = nullptr;
      if (partner == nullptr && cur.end > cur.start) partner = group.partner_of(cur);
      if (partner == nullptr) continue;
      ++count_;
      if (partner->end_kind == HoldEnd::kLost) ++told_;
      if (k.kept++ < max_violations_) found_.push_back(Found{*partner, cur});
    }
  }

  nlohmann::json hold_json(const Hold& h) const {
    static constexpr const char* kEnds[] = {"release", "retired", "end-of-history", "lost"};
    nlohmann::json j = {{"process", h.process},      {"node", nodes_.name(h.node)},
                        {"acquire_index", h.acquire_index}, {"start", h.start},
                        {"end", h.end},              {"ended_by", kEnds[static_cast<int>(h.end_kind)]},
                        {"token", h.token ? nlohmann::json(*h.token) : nlohmann::json()}};
    if (h.end_kind != HoldEnd::kEndOfHistory) j["end_index"] = h.end_index;
    return j;
  }

  nlohmann::json violation_json(const Hold& a, const Hold& b) const {
    nlohmann::json j = {{"key", keys_.name(a.key)}, {"held", hold_json(a)}, {"acquired", hold_json(b)},
                        {"message", sentence(a, b)}};
    if (said_lost_) j["holder_told"] = a.end_kind == HoldEnd::kLost;
    return j;
  }

  std::string sentence(const Hold& a, const Hold& b) const {
    std::string until = a.end_kind == HoldEnd::kEndOfHistory
                            ? "until the end of the history at " + format_seconds(a.end)
                            : "to " + format_seconds(a.end);
    std::string told;
    if (a.end_kind == HoldEnd::kLost) {
      told = "; the library said lost at " + format_seconds(a.end);
    } else if (said_lost_) {
      told = "; the library stayed silent";
    }
    return describe_process(a.process, nodes_.name(a.node)) + " held " + keys_.name(a.key) +
           " from " + format_seconds(a.start) + " " + until + " while " +
           describe_process(b.process, nodes_.name(b.node)) + " acquired it at " +
           format_seconds(b.start) + told;
  }

  std::size_t max_violations_;
  TimeOrderGuard time_order_{"exclusion"};
  Interner keys_;
  Interner nodes_;
  InFlightInvokes invokes_;
  std::vector<KeyHolds> by_key_;  // by key id
  std::unordered_map<std::int64_t, std::vector<OpenHold>> open_;  // process → its open holds
  std::vector<Found> found_;
  std::uint64_t count_ = 0;
  std::uint64_t holds_ = 0;
  std::uint64_t closed_ = 0;
  std::uint64_t kept_now_ = 0;   // holds in every key's `pending`
  std::uint64_t kept_peak_ = 0;  // the most ever kept at once
  Nanos last_time_ = 0;
  bool said_lost_ = false;  // the history has lost notices: violations say who was told
  std::uint64_t lost_notices_ = 0;
  std::uint64_t told_ = 0;  // violations whose earlier holder's hold ended at a lost notice
};

}  // namespace

std::unique_ptr<Checker> make_exclusion_checker(const CheckOptions& options) {
  return std::make_unique<ExclusionChecker>(options);
}

}  // namespace fencecheck
