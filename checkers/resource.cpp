// resource: what the protected data says (DESIGN.md).
//
// 1. resource.jsonl, in file order: an accepted op whose token is below the highest token
//    already accepted on its key is a stale access (rejected entries raise nothing).
// 2. lock-append keys (ok reads return arrays, or writes append to arrays): the final read
//    is the last ok read of the key. Every element added by an ok write must be in it (else
//    a lost update) — even a write that completed after that read began: the runner makes
//    its final reads after every client stopped, so such a write means the final reads
//    failed, and nothing may pass unjudged. The element of a fail write must never be in
//    it (info writes may go either way). A final read of null is an empty list.
// 3. compare-and-set (the `cas` workload): replaying resource.jsonl in file order, an
//    accepted cas must have found the value it expected (the key's value after the
//    accepted writes and cas before it; null at first). Otherwise the resource broke
//    the one promise a lock-free client relies on.
#include <algorithm>
#include <map>
#include <unordered_set>

#include "checkers/bounded.h"
#include "checkers/safety.h"
#include "checkers/tracking.h"

namespace fencecheck {
namespace {

struct Write {
  std::string element;
  std::int64_t process;
  std::uint32_t node;
  std::uint64_t index;  // of the completion
  Nanos completed;
  std::optional<Token> token;
};

struct AppendKey {
  std::vector<Write> ok_writes;
  std::vector<Write> failed_writes;
  bool has_final_read = false;
  bool final_is_list = true;
  Nanos final_invoked = 0;  // to say so when a missing write completed after the read began
  std::uint64_t final_index = 0;
  std::vector<std::string> final_items;
};

struct HighestToken {
  Token token;
  std::uint64_t seq;
  std::string client;
};

class ResourceChecker : public Checker {
 public:
  explicit ResourceChecker(const CheckOptions& o) : max_violations_(o.max_violations) {}

  void observe(const Event& e) override {
    if (e.is_nemesis()) return;
    InFlightInvokes::Invoke inv = invokes_.observe(e);
    if (e.f == OpFn::kWrite && e.is_completion() && !e.appended.empty()) {
      if (e.type == OpType::kInfo) return;
      Write w{e.appended, e.process, nodes_.id(e.node), e.index, e.time, e.token};
      auto& k = keys_[e.key];
      (e.type == OpType::kOk ? k.ok_writes : k.failed_writes).push_back(std::move(w));
    } else if (e.f == OpFn::kRead && e.type == OpType::kOk) {
      bool is_null = e.value == "null";
      if (!e.read_is_array && !keys_.contains(e.key)) return;  // not (yet) a lock-append key
      auto& k = keys_[e.key];
      k.has_final_read = true;
      k.final_is_list = e.read_is_array || is_null;
      k.final_invoked = inv.time;
      k.final_index = e.index;
      k.final_items = e.read_items;
    }
  }

  void observe_resource(const ResourceEntry& r) override {
    ++log_entries_;
    if (r.accepted) check_cas(r);
    if (!r.accepted || !r.token) return;
    auto [it, fresh] = highest_.try_emplace(r.key, HighestToken{*r.token, r.seq, r.client});
    if (fresh) return;
    HighestToken& h = it->second;
    if (*r.token < h.token) {
      add(static_cast<Nanos>(r.time),
          {{"kind", "stale-access"}, {"key", r.key}, {"seq", r.seq}, {"line", r.line},
           {"op", to_string(r.op)}, {"token", *r.token}, {"client", r.client},
           {"time", r.time}, {"highest_token", h.token}, {"highest_seq", h.seq},
           {"message", "the resource accepted a " + std::string(to_string(r.op)) +
                           " of " + r.key + " with token " + std::to_string(*r.token) +
                           (r.client.empty() ? "" : " from " + r.client) + " at " +
                           format_seconds(r.time) + " (seq " + std::to_string(r.seq) +
                           ") after accepting token " + std::to_string(h.token) + " (seq " +
                           std::to_string(h.seq) + ")"}});
    } else if (*r.token > h.token) {
      h = HighestToken{*r.token, r.seq, r.client};
    }
  }

  CheckResult finish() override {
    std::uint64_t judged = 0, after_final = 0;
    for (auto& [key, k] : keys_) {
      if (!k.has_final_read) {
        notes_.push_back("no ok read of " + key + ": its writes were not judged");
        continue;
      }
      if (!k.final_is_list) {
        notes_.push_back("the final read of " + key + " is not a list: its writes were not judged");
        continue;
      }
      std::unordered_set<std::string> present(k.final_items.begin(), k.final_items.end());
      for (const Write& w : k.ok_writes) {
        ++judged;
        if (present.contains(w.element)) continue;
        bool after = w.completed >= k.final_invoked;
        after_final += after;
        add(w.completed, write_violation("lost-update", key, w, k,
                                         "the ok write of " + bounded_text(w.element) + " to " + key + " by " +
                                             describe_process(w.process, nodes_.name(w.node)) +
                                             " at " + format_seconds(w.completed) +
                                             " is missing from the final read" +
                                             (after ? " (which began before the write completed)" : "")));
      }
      for (const Write& w : k.failed_writes) {
        if (!present.contains(w.element)) continue;
        add(w.completed, write_violation("failed-write-visible", key, w, k,
                                         "the failed write of " + bounded_text(w.element) + " to " + key + " by " +
                                             describe_process(w.process, nodes_.name(w.node)) +
                                             " at " + format_seconds(w.completed) +
                                             " appears in the final read"));
      }
    }
    CheckResult r;
    r.stats = {{"resource_log_entries", log_entries_}, {"append_keys", keys_.size()}, {"cas_applied", cas_applied_},
               {"writes_judged", judged}, {"lost_after_final_read_began", after_final}};
    if (!notes_.empty()) r.stats["notes"] = notes_;
    if (log_entries_ == 0 && keys_.empty()) {
      r.verdict = Verdict::kSkipped;
      r.summary = "no resource log and no lock-append reads or writes";
      return r;
    }
    trim();
    r.count = count_;
    if (!found_.empty()) r.first_violation_at = found_.front().first;
    for (auto& f : found_) r.violations.push_back(std::move(f.second));
    r.verdict = count_ == 0 ? Verdict::kValid : Verdict::kInvalid;
    std::string clean = std::to_string(log_entries_) + " resource log entries without a stale access";
    if (!keys_.empty() || cas_applied_ == 0) {
      clean += "; " + std::to_string(judged) + " ok writes all present in the final reads";
    }
    if (cas_applied_ > 0) clean += "; " + std::to_string(cas_applied_) + " applied cas each found the value it expected";
    r.summary = count_ == 0 ? clean : r.violations.front()["message"].get<std::string>();
    return r;
  }

 private:
  void check_cas(const ResourceEntry& r) {
    if (r.op == ResourceEntry::Op::kRead) return;
    auto it = current_.try_emplace(r.key, "null").first;
    cas_applied_ += r.op == ResourceEntry::Op::kCas;
    if (r.op == ResourceEntry::Op::kCas && r.expect != it->second) {
      add(static_cast<Nanos>(r.time),
          {{"kind", "cas-on-mismatch"}, {"key", r.key}, {"seq", r.seq}, {"line", r.line},
           {"client", r.client}, {"time", r.time}, {"expected", bounded_json(r.expect)},
           {"found", bounded_json(it->second)},
           {"message", "the resource accepted a cas of " + r.key + (r.client.empty() ? "" : " from " + r.client) +
                           " at " + format_seconds(r.time) + " (seq " + std::to_string(r.seq) + ") expecting " +
                           bounded_text(r.expect) + " while the key held " + bounded_text(it->second)}});
    }
    it->second = r.value;
  }

  nlohmann::json write_violation(const char* kind, const std::string& key, const Write& w,
                                 const AppendKey& k, const std::string& message) const {
    return {{"kind", kind}, {"key", key}, {"element", bounded_json(w.element)},
            {"write", {{"process", w.process}, {"node", nodes_.name(w.node)}, {"index", w.index},
                       {"completed", w.completed},
                       {"token", w.token ? nlohmann::json(*w.token) : nlohmann::json()}}},
            {"final_read_index", k.final_index}, {"message", message}};
  }

  // Keeps the earliest max_violations_ violations by time; counts all.
  void add(Nanos t, nlohmann::json v) {
    ++count_;
    found_.emplace_back(t, std::move(v));
    if (found_.size() > 4 * max_violations_ + 16) trim();
  }
  void trim() {
    std::sort(found_.begin(), found_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    found_.resize(std::min(found_.size(), max_violations_));
  }

  std::size_t max_violations_;
  Interner nodes_;
  InFlightInvokes invokes_;
  std::map<std::string, AppendKey> keys_;
  std::unordered_map<std::string, HighestToken> highest_;
  std::unordered_map<std::string, std::string> current_;  // a key's value per the log
  std::vector<std::pair<Nanos, nlohmann::json>> found_;
  std::vector<std::string> notes_;
  std::uint64_t count_ = 0;
  std::uint64_t log_entries_ = 0;
  std::uint64_t cas_applied_ = 0;
};

}  // namespace

std::unique_ptr<Checker> make_resource_checker(const CheckOptions& options) {
  return std::make_unique<ResourceChecker>(options);
}

}  // namespace fencecheck
