// exclusion: holds of one key by different processes must not overlap (docs/checkers.md).
//
// A hold starts when an acquire completes ok and ends at the invoke of the holder's next
// release of that key, or at the holder's `lost` notice of that key (its library told it),
// else at the invoke of the op whose info retired the holder, else at the last line of the
// history. Each key's holds are swept in order of start, keeping the two latest-ending
// holds of distinct processes among those that started earlier: O(n log n) at worst, O(n)
// when holds do not pile up. A hold that begins while a hold of another process is still in
// force is an acquire inside the latest-ending such hold, its *partner*.
//
// Violations are grouped by the earlier hold: one group per hold that some acquire of
// another process began inside, counting those acquires and keeping the first few. `count`
// is the number of groups (holds overlapped), the stat `acquires_inside` the number of
// acquires inside them (each acquire is in exactly one group: its partner's). When the
// history has notices at all (a library that can say lost), each group also says whether
// its holder had been told. Each group is blamed (blame.h) from what its hold recorded as it
// went: the promise, the first grant to another process inside it (`contested_at`) and the
// promise in force then, the holder's last act and its requests after that grant.
//
// Memory. Times never go backwards in file order (the readers enforce it; TimeOrderGuard
// checks it), so every hold still to come starts at or after the current line's time
// `now`, and holds arrive in order of start. A hold is judged, folded into the sweep's
// two-hold summary and forgotten as soon as every hold that started no later than it is
// known and closed: it started before `now` and before the key's oldest open hold. What is
// kept per key is therefore the summary, the first few groups (each with its first few
// acquires; a group's counter rides on its hold, which stays in the summary as long as
// acquires can still begin inside it — there is no table of groups), and the holds that
// started since the key's oldest open hold (or since the key's last event) — in a history
// without overlaps, about one hold per process holding the key, whatever the length of
// the history. A hold left open for long (a holder that never releases) keeps the holds of
// that key that started after it until it closes; in a valid history those are only the
// holder's own, or others' during a hung op of the holder that may still retire it.
#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <vector>

#include "checkers/exclusion_holds.h"
#include "checkers/safety.h"
#include "checkers/tracking.h"

namespace fencecheck {
namespace {

using namespace exclusion;

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
      } else if (e.f == OpFn::kRenewed && e.valid_ms) {
        for_open_holds(e.process, [&](Hold& h) {
          if (h.key == keys_.id(e.key) && h.promise.valid_ms) h.promise_end = promise_end(e.time, *e.valid_ms);
        });
      }
      return;
    }
    InFlightInvokes::Invoke inv = invokes_.observe(e);
    if (e.is_completion() && e.f != OpFn::kAcquire) acted(e, inv.time);
    if (e.type == OpType::kInvoke && e.f == OpFn::kRelease) {
      for_open_holds(e.process, [&](Hold& h) { h.last_act = e.time; });
      close(e.process, keys_.id(e.key), e.time, e.index, HoldEnd::kRelease);
    } else if (e.type == OpType::kInfo) {
      close(e.process, std::nullopt, inv.time, inv.index, HoldEnd::kRetired);
    } else if (e.type == OpType::kOk && e.f == OpFn::kAcquire) {
      std::uint32_t key = keys_.id(e.key);
      KeyHolds& k = key_holds(key);
      contest(k, e.process, e.time, granted_expired(inv.time, e.time, e.valid_ms));
      const std::uint64_t seq = k.judged + k.pending.size();
      open_[e.process].push_back({key, seq});
      k.open.push_back(seq);
      Hold h{key, nodes_.id(e.node), e.process, e.time, 0, e.index, 0, e.token,
             HoldEnd::kEndOfHistory, true, 0, 0, kNoGroup};
      h.promise = {e.promised, e.valid_ms, inv.time, e.time, 0};
      if (e.valid_ms) h.promise_end = promise_end(inv.time, *e.valid_ms);
      if (!e.bound.empty()) h.bound = bounds_.id(e.bound) + 1;
      k.pending.push_back(h);
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
    for (KeyHolds& k : by_key_) k.open.clear();
    for (std::uint32_t key = 0; key < by_key_.size(); ++key) {
      judge(key, std::numeric_limits<Nanos>::max());
    }
    // The first few groups of each key, earliest first acquire first; equal times in key
    // order. Groups are made in order of their first acquire, so these are the earliest.
    std::stable_sort(found_.begin(), found_.end(), [](const Group& a, const Group& b) {
      const Hold& x = a.inside.front();
      const Hold& y = b.inside.front();
      return x.start != y.start ? x.start < y.start : x.key < y.key;
    });
    if (found_.size() > max_violations_) found_.resize(max_violations_);
    CheckResult r;
    if (!found_.empty()) r.first_violation_at = found_.front().inside.front().start;
    for (const Group& g : found_) r.violations.push_back(group_json(g));
    r.count = groups_;
    r.verdict = r.count == 0 ? Verdict::kValid : Verdict::kInvalid;
    if (r.count > 0) r.count_text = count_text();
    r.stats = {{"holds", holds_},
               {"keys", keys_.size()},
               {"holds_kept_peak", kept_peak_},
               {"acquires_inside", acquires_inside_}};
    // Lock libraries: how often they said `lost`, and how many overlapped holds' holder was
    // told (always during the overlap: a notice before it would have ended the hold).
    if (said_lost_) r.stats.update({{"lost_notices", lost_notices_}, {"violations_told", told_}});
    if (groups_ > 0) r.stats.update(tally_.stats());
    if (holds_ == 0) {
      r.verdict = Verdict::kSkipped;
      r.summary = "no acquire completed ok: no hold to judge";
      return r;
    }
    r.summary = r.count == 0 ? std::to_string(holds_) + " holds on " + std::to_string(keys_.size()) +
                                   " key(s), none overlapping"
                             : sentence(found_.front());
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

  template <typename Fn>
  void for_open_holds(std::int64_t process, Fn&& fn) {
    auto it = open_.find(process);
    if (it == open_.end()) return;
    for (const OpenHold& o : it->second) fn(hold_at(o));
  }

  // Another process got `k` at `now`: the first time during an open hold, that hold is
  // contested, and its promise in force now is the one blame weighs.
  void contest(KeyHolds& k, std::int64_t process, Nanos now, bool void_grant) {
    for (std::uint64_t seq : k.open) {
      Hold& h = k.pending[seq - k.judged];
      if (h.process == process || h.contested_at != kNever) continue;
      h.contested_at = now;
      h.promise.end_at_later_grant = h.promise_end;
      h.promise.later_grant_expired = void_grant;
    }
  }

  // A completed op (not an acquire) of e.process, invoked at `invoked`: what its holds did.
  void acted(const Event& e, Nanos invoked) {
    for_open_holds(e.process, [&](Hold& h) {
      h.last_act = std::max(h.last_act, invoked);
      const OpSpec& op = op_spec(e.f);
      if (op.runs_at != OpPlace::kResource || h.contested_at == kNever || invoked < h.contested_at) return;
      // Data the resource took from a holder no longer alone; requests a fence turned away
      // (lock-append's stale holder is refused at its read, before it writes).
      if (e.type == OpType::kOk && op.changes_state) ++h.writes_accepted;
      if (e.type == OpType::kFail) ++h.writes_refused;
    });
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
      auto& open = by_key_[o->key].open;
      open.erase(std::find(open.begin(), open.end(), o->seq));
      if (kind == HoldEnd::kRetired) h.last_act = std::max(h.last_act, end);
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

  // `group_size` holds starting at the same instant, at the front of k.pending.
  void judge_group(KeyHolds& k, std::size_t group_size) {
    Latest group;  // copies, to find a partner among them: the counters go on k.pending's
    for (std::size_t i = 0; i < group_size; ++i) {
      if (k.pending[i].end > k.pending[i].start) group.add(k.pending[i]);
    }
    for (std::size_t i = 0; i < group_size; ++i) {
      const Hold& cur = k.pending[i];
      Hold* partner = k.before.partner_of(cur);
      if (partner == nullptr || partner->end <= cur.start) partner = nullptr;
      if (partner == nullptr && cur.end > cur.start) {
        if (const Hold* p = group.partner_of(cur)) {
          for (std::size_t j = 0; j < group_size; ++j) {
            if (k.pending[j].acquire_index == p->acquire_index) partner = &k.pending[j];
          }
        }
      }
      if (partner != nullptr) count_inside(k, *partner, cur);
    }
  }

  // `cur` began inside `held`, a hold of another process (closed and judged, or of cur's
  // own batch): counted in held's group, made on its first acquire.
  void count_inside(KeyHolds& k, Hold& held, const Hold& cur) {
    ++acquires_inside_;
    if (held.inside++ == 0) {
      ++groups_;
      if (held.end_kind == HoldEnd::kLost) ++told_;
      // Two holds that began at one instant: the earlier grant never saw the other come.
      const Nanos later = held.contested_at != kNever ? held.contested_at : cur.start;
      HeldPromise promise = held.promise;
      if (held.contested_at == kNever) {
        promise.end_at_later_grant = held.promise_end;
        promise.later_grant_expired = granted_expired(cur.promise.asked, cur.promise.granted, cur.promise.valid_ms);
      }
      const BlameFinding found = blame(promise, later);
      tally_.add({found.blame,
                  held.end_kind == HoldEnd::kLost ? std::optional<Nanos>(held.end - later) : std::nullopt,
                  held.writes_accepted, held.writes_refused});
      if (k.kept < max_violations_) {
        ++k.kept;
        held.group = found_.size();
        found_.push_back(Group{held, {}, 0, found, later});
      }
    }
    if (held.group == kNoGroup) return;
    Group& g = found_[held.group];
    ++g.acquires;
    if (g.inside.size() < kShownInside) g.inside.push_back(cur);
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

  // "held": the earlier hold; "acquired": the first acquire inside it; "inside": the first
  // few (that one included); "acquires_inside": how many in all.
  nlohmann::json group_json(const Group& g) const {
    nlohmann::json inside = nlohmann::json::array();
    for (const Hold& h : g.inside) inside.push_back(hold_json(h));
    nlohmann::json j = {{"key", keys_.name(g.held.key)},      {"held", hold_json(g.held)},
                        {"acquired", hold_json(g.inside.front())}, {"acquires_inside", g.acquires},
                        {"inside", std::move(inside)},         {"message", sentence(g)},
                        {"blame", blame_report(g).to_json()}};
    if (said_lost_) j["holder_told"] = g.held.end_kind == HoldEnd::kLost;
    return j;
  }

  BlameReport blame_report(const Group& g) const {
    const Hold& h = g.held;
    BlameReport r;
    r.finding = g.blame;
    r.held = h.promise;
    r.later_grant = g.later_grant;
    r.acted_after_end = g.blame.promised_end && h.last_act != kNever && h.last_act >= *g.blame.promised_end;
    if (h.end_kind == HoldEnd::kLost) r.told_at = h.end;
    if (h.bound != 0) r.bound = bounds_.name(h.bound - 1);
    r.writes_accepted = h.writes_accepted;
    r.writes_refused = h.writes_refused;
    return r;
  }

  // "4 holds overlapped by 128 acquires (overstayed 4; told 0, silent 4)"
  static std::string clause_of(const BlameReport& r) {
    std::string c = r.clause();
    return c.empty() ? c : "; " + c;
  }

  std::string count_text() const {
    return std::to_string(groups_) + (groups_ == 1 ? " hold" : " holds") + " overlapped by " +
           std::to_string(acquires_inside_) + (acquires_inside_ == 1 ? " acquire" : " acquires") +
           (tally_.text().empty() ? "" : " (" + tally_.text() + ")");
  }

  std::string sentence(const Group& g) const {
    const Hold& a = g.held;
    const Hold& b = g.inside.front();
    std::string until = a.end_kind == HoldEnd::kEndOfHistory
                            ? "until the end of the history at " + format_seconds(a.end)
                            : "to " + format_seconds(a.end);
    std::string told;
    if (a.end_kind == HoldEnd::kLost) {
      told = "; the library said lost at " + format_seconds(a.end);
    } else if (said_lost_) {
      told = "; the library stayed silent";
    }
    const std::string first = describe_process(b.process, nodes_.name(b.node));
    const std::string others = g.acquires == 1 ? first + " acquired it at "
                                               : "others acquired it " + std::to_string(g.acquires) +
                                                     " times, first " + first + " at ";
    return describe_process(a.process, nodes_.name(a.node)) + " held " + keys_.name(a.key) +
           " from " + format_seconds(a.start) + " " + until + " while " + others +
           format_seconds(b.start) + told + clause_of(blame_report(g));
  }

  std::size_t max_violations_;
  TimeOrderGuard time_order_{"exclusion"};
  Interner keys_;
  Interner nodes_;
  InFlightInvokes invokes_;
  std::vector<KeyHolds> by_key_;  // by key id
  std::unordered_map<std::int64_t, std::vector<OpenHold>> open_;  // process → its open holds
  std::vector<Group> found_;  // the first few groups of each key
  std::uint64_t groups_ = 0;            // holds overlapped: the count
  std::uint64_t acquires_inside_ = 0;   // acquires inside them
  std::uint64_t holds_ = 0;
  std::uint64_t closed_ = 0;
  std::uint64_t kept_now_ = 0;   // holds in every key's `pending`
  std::uint64_t kept_peak_ = 0;  // the most ever kept at once
  Nanos last_time_ = 0;
  bool said_lost_ = false;  // the history has lost notices: violations say who was told
  std::uint64_t lost_notices_ = 0;
  std::uint64_t told_ = 0;  // groups whose hold ended at a lost notice: its holder was told
  Interner bounds_;          // what untimed promises live by ("session")
  BlameTally tally_;
};

}  // namespace

std::unique_ptr<Checker> make_exclusion_checker(const CheckOptions& options) {
  return std::make_unique<ExclusionChecker>(options);
}

}  // namespace fencecheck
