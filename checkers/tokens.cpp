// tokens: over ok acquires of one key that carry a token, no token is granted twice, and
// an acquire invoked after another completed gets a greater token (docs/checkers.md).
//
// Streaming, per key. Times never go backwards in file order (the readers enforce it;
// TimeOrderGuard checks it), so when acquire Y completes every grant that completed before
// Y was invoked is known: Y is judged at once against the greatest token among them.
//
// Memory. A grant that completed before the invoke of every acquire of its key still in
// flight (and before the current line: acquires still to come are invoked later) has been
// seen by every acquire still to judge; for the "increasing" rule it only counts through
// the greatest token completed so far, so only the grants since that horizon are kept in
// full (`recent`) — a few per process in a valid history. The "unique" rule needs every
// token ever granted on the key, however far apart a duplicate comes: those are kept
// compactly in a GrantArchive (granted_tokens.h), ~20 bytes a grant. Violations kept in
// detail: at most max_violations per key, chosen as the whole-history sort would.
#include <algorithm>
#include <deque>
#include <set>

#include "checkers/granted_tokens.h"
#include "checkers/safety.h"
#include "checkers/tracking.h"

namespace fencecheck {
namespace {

// A violation kept in detail, with what orders it among the key's violations.
struct Kept {
  std::vector<std::int64_t> rank;  // smaller first
  Nanos seen;                      // when it happened: the later grant's completion
  nlohmann::json violation;
};

// The first `max` violations of one kind by rank.
class FirstFew {
 public:
  explicit FirstFew(std::size_t max) : max_(max) {}
  bool wants(const std::vector<std::int64_t>& rank) const {
    return list_.size() < max_ || rank < list_.back().rank;
  }
  void add(Kept k) {
    auto at = std::upper_bound(list_.begin(), list_.end(), k.rank,
                               [](const auto& r, const Kept& x) { return r < x.rank; });
    list_.insert(at, std::move(k));
    if (list_.size() > max_) list_.pop_back();
  }
  std::vector<Kept>& list() { return list_; }

 private:
  std::size_t max_;
  std::vector<Kept> list_;
};

struct KeyGrants {
  explicit KeyGrants(std::size_t max) : duplicates(max), decreasing(max) {}
  struct Recent {
    Grant grant;
    Grant highest;  // greatest token completed up to and including `grant`
  };
  std::deque<Recent> recent;              // in order of completion
  std::optional<Grant> highest_archived;  // greatest token among grants no longer recent
  TokenSet tokens;
  GrantArchive archive;
  FirstFew duplicates;  // by token, then order of completion
  FirstFew decreasing;  // by invoke, then token, then order of completion
};

class TokensChecker : public Checker {
 public:
  explicit TokensChecker(const CheckOptions& o) : max_violations_(o.max_violations) {}

  void observe(const Event& e) override {
    const Nanos now = time_order_.check(e);
    if (e.is_nemesis()) return;
    InFlightInvokes::Invoke inv = invokes_.observe(e);
    if (e.f != OpFn::kAcquire) return;
    if (e.type == OpType::kInvoke) {
      acquires_in_flight_[e.key].insert(e.time);
      return;
    }
    finished_acquire(e.key, inv.time);
    if (e.type != OpType::kOk) return;
    ++ok_acquires_;
    if (!e.token) return;
    std::uint32_t key = keys_.id(e.key);
    if (key == by_key_.size()) by_key_.emplace_back(max_violations_);
    KeyGrants& k = by_key_[key];
    Grant g{key, nodes_.id(e.node), e.process, inv.time, e.time, e.index, *e.token};
    ++grants_;
    judge(k, g);
    const Grant* before = k.recent.empty() ? (k.highest_archived ? &*k.highest_archived : nullptr)
                                           : &k.recent.back().highest;
    k.recent.push_back({g, before == nullptr || g.token > before->token ? g : *before});
    kept_peak_ = std::max(kept_peak_, ++kept_now_);
    forget_seen(k, e.key, now);
  }

  CheckResult finish() override {
    CheckResult r;
    r.stats = {{"ok_acquires", ok_acquires_}, {"with_token", grants_}, {"grants_kept_peak", kept_peak_}};
    if (grants_ == 0) {
      r.verdict = Verdict::kSkipped;
      r.summary = "no ok acquire carries a token";
      return r;
    }
    std::vector<Kept> found;  // each key's first few, duplicates before decreasing
    for (KeyGrants& k : by_key_) {
      std::size_t kept = 0;
      for (FirstFew* kind : {&k.duplicates, &k.decreasing}) {
        for (Kept& v : kind->list()) {
          if (kept++ < max_violations_) found.push_back(std::move(v));
        }
      }
    }
    std::stable_sort(found.begin(), found.end(), [](const Kept& a, const Kept& b) { return a.seen < b.seen; });
    if (found.size() > max_violations_) found.resize(max_violations_);
    if (!found.empty()) r.first_violation_at = found.front().seen;
    for (auto& f : found) r.violations.push_back(std::move(f.violation));
    r.count = count_;
    r.verdict = r.count == 0 ? Verdict::kValid : Verdict::kInvalid;
    r.summary = r.count == 0 ? std::to_string(grants_) + " tokens on " + std::to_string(keys_.size()) +
                                   " key(s), unique and increasing"
                             : r.violations.front()["message"].get<std::string>();
    return r;
  }

 private:
  void finished_acquire(const std::string& key, Nanos invoked) {
    auto it = acquires_in_flight_.find(key);
    if (it == acquires_in_flight_.end()) return;
    auto one = it->second.find(invoked);
    if (one != it->second.end()) it->second.erase(one);
    if (it->second.empty()) acquires_in_flight_.erase(it);
  }

  // Archives the recent grants every acquire still to judge has seen complete: those that
  // completed before `now` and before the invoke of each acquire of the key in flight.
  void forget_seen(KeyGrants& k, const std::string& key, Nanos now) {
    Nanos horizon = now;
    if (auto it = acquires_in_flight_.find(key); it != acquires_in_flight_.end()) {
      horizon = std::min(horizon, *it->second.begin());
    }
    while (!k.recent.empty() && k.recent.front().grant.completed < horizon) {
      k.highest_archived = k.recent.front().highest;
      k.archive.append(k.recent.front().grant);
      k.recent.pop_front();
      --kept_now_;
    }
  }

  // Judges the new grant `y` against every grant of its key before it.
  void judge(KeyGrants& k, const Grant& y) {
    if (!k.tokens.insert(y.token)) {
      ++count_;
      std::vector<std::int64_t> rank = {y.token, static_cast<std::int64_t>(grants_)};
      if (k.duplicates.wants(rank)) {
        Grant a = latest_with(k, y.token);
        k.duplicates.add({rank, y.completed, duplicate_json(a, y)});
      }
    }
    // The greatest token among grants completed before y was invoked.
    auto after = std::lower_bound(k.recent.begin(), k.recent.end(), y.invoked,
                                  [](const KeyGrants::Recent& r, Nanos t) { return r.grant.completed < t; });
    const Grant* highest = after != k.recent.begin() ? &std::prev(after)->highest
                           : k.highest_archived      ? &*k.highest_archived
                                                     : nullptr;
    if (highest == nullptr || highest->token <= y.token) return;
    ++count_;
    std::vector<std::int64_t> rank = {y.invoked, y.token, static_cast<std::int64_t>(grants_)};
    if (k.decreasing.wants(rank)) k.decreasing.add({rank, y.completed, decreasing_json(*highest, y)});
  }

  Grant latest_with(const KeyGrants& k, Token t) const {
    for (auto r = k.recent.rbegin(); r != k.recent.rend(); ++r) {
      if (r->grant.token == t) return r->grant;
    }
    return *k.archive.latest_with(t);  // the token set says it was granted
  }

  nlohmann::json duplicate_json(const Grant& a, const Grant& b) const {
    return {{"kind", "duplicate"}, {"key", keys_.name(b.key)}, {"token", b.token},
            {"first", grant_json(a)}, {"second", grant_json(b)},
            {"message", describe(a) + " and " + describe(b) + " were both granted token " +
                            std::to_string(b.token) + " on " + keys_.name(b.key)}};
  }

  nlohmann::json decreasing_json(const Grant& highest, const Grant& y) const {
    return {{"kind", "decreasing"}, {"key", keys_.name(y.key)}, {"earlier", grant_json(highest)},
            {"later", grant_json(y)},
            {"message", describe(y) + " was granted token " + std::to_string(y.token) + " on " +
                            keys_.name(y.key) + " (invoked at " + format_seconds(y.invoked) +
                            ") after " + describe(highest) + " had been granted token " +
                            std::to_string(highest.token) + " at " + format_seconds(highest.completed)}};
  }

  std::string describe(const Grant& g) const {
    return describe_process(g.process, nodes_.name(g.node));
  }

  nlohmann::json grant_json(const Grant& g) const {
    return {{"process", g.process}, {"node", nodes_.name(g.node)}, {"index", g.index},
            {"invoked", g.invoked}, {"completed", g.completed}, {"token", g.token}};
  }

  std::size_t max_violations_;
  TimeOrderGuard time_order_{"tokens"};
  Interner keys_;  // keys with a token granted, in order of their first grant
  Interner nodes_;
  InFlightInvokes invokes_;
  std::vector<KeyGrants> by_key_;  // by key id
  // Invoke times of the acquires in flight, by key.
  std::unordered_map<std::string, std::multiset<Nanos>> acquires_in_flight_;
  std::uint64_t ok_acquires_ = 0;
  std::uint64_t grants_ = 0;
  std::uint64_t count_ = 0;
  std::uint64_t kept_now_ = 0;   // grants in every key's `recent`
  std::uint64_t kept_peak_ = 0;  // the most ever kept there at once
};

}  // namespace

std::unique_ptr<Checker> make_tokens_checker(const CheckOptions& options) {
  return std::make_unique<TokensChecker>(options);
}

}  // namespace fencecheck
