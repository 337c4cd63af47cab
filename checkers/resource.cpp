// resource: what the protected data says (docs/checkers.md).
//
// 1. resource.jsonl, in file order: an accepted op whose token is below the highest token
//    already accepted on its key is a stale access (rejected entries raise nothing).
// 2. lock-append keys (ok reads return arrays, or writes append to arrays): the final read
//    is the last ok read of the key (in file order). It proves a write lost only if the
//    write completed strictly before the read was invoked: such an ok write's element must
//    be in it (else a lost update). An ok write whose element is missing but that completed
//    at or after that invoke is not judged by it — on a run cut short the last ok read is
//    often a writer's own read just before its write, and calling that write lost would be
//    a false violation. Such a write, a key with ok or fail writes but no ok read at all,
//    or a final read that is not a list leaves that key's rule undecided: the verdict is
//    unknown, naming the key, the write and the read, unless a violation was found
//    (never silently valid). An element present in the final read is judged present
//    whenever its write completed. The element of a fail write must never be in the final
//    read, whenever the read was taken (info writes may go either way). A final read of
//    null is an empty list. The runner makes its final reads after every client stopped,
//    so a finished run leaves nothing undecided.
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

// The last ok read of a key so far: the final read once the history ends.
struct FinalRead {
  bool is_list = true;
  std::int64_t process = 0;
  std::uint32_t node = 0;
  std::uint64_t invoke_index = 0;
  std::uint64_t index = 0;  // of the completion
  Nanos invoked = 0;        // only writes completed strictly before this are judged
  Nanos completed = 0;
  std::vector<std::string> items;
};

struct AppendKey {
  std::vector<Write> ok_writes;
  std::vector<Write> failed_writes;
  std::optional<FinalRead> final_read;
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
      keys_[e.key].final_read = FinalRead{e.read_is_array || is_null, e.process, nodes_.id(e.node), inv.index,
                                          e.index, inv.time, e.time, e.read_items};
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
    for (auto& [key, k] : keys_) judge_key(key, k);
    CheckResult r;
    r.stats = {{"resource_log_entries", log_entries_}, {"append_keys", keys_.size()}, {"cas_applied", cas_applied_},
               {"writes_judged", judged_}, {"writes_undecided", undecided_writes_}};
    if (!undecided_.empty()) r.stats["undecided"] = undecided_;
    if (log_entries_ == 0 && keys_.empty()) {
      r.verdict = Verdict::kSkipped;
      r.summary = "no resource log and no lock-append reads or writes";
      return r;
    }
    trim();
    r.count = count_;
    if (!found_.empty()) r.first_violation_at = found_.front().first;
    for (auto& f : found_) r.violations.push_back(std::move(f.second));
    if (count_ > 0) {
      r.verdict = Verdict::kInvalid;
      r.summary = r.violations.front()["message"].get<std::string>();
      return r;
    }
    if (!undecided_.empty()) {
      r.verdict = Verdict::kUnknown;
      r.summary = undecided_.front()["message"].get<std::string>();
      if (std::uint64_t more = undecided_keys_ - 1; more > 0) {
        r.summary += " (and " + std::to_string(more) + (more == 1 ? " more key" : " more keys") + " undecided)";
      }
      if (judged_ > 0) r.summary += "; " + std::to_string(judged_) + (judged_ == 1 ? " ok write" : " ok writes") +
                                    " judged, all present";
      return r;
    }
    r.verdict = Verdict::kValid;
    r.summary = std::to_string(log_entries_) + " resource log entries without a stale access";
    if (!keys_.empty() || cas_applied_ == 0) {
      r.summary += "; " + std::to_string(judged_) + " ok writes all present in the final reads";
    }
    if (cas_applied_ > 0) {
      r.summary += "; " + std::to_string(cas_applied_) + " applied cas each found the value it expected";
    }
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

  // Rule 2 for one key. A missing element is a lost update only when its write completed
  // strictly before the final read was invoked; otherwise the read proves nothing about it.
  void judge_key(const std::string& key, const AppendKey& k) {
    if (!k.final_read) {
      undecided(key, "no-final-read", k.ok_writes.size() + k.failed_writes.size(), nullptr, nullptr,
                "the lost-update rule of " + key + " is undecided: it has " + std::to_string(k.ok_writes.size()) +
                    " ok and " + std::to_string(k.failed_writes.size()) +
                    " failed writes but no ok read (the run may have been cut short)");
      return;
    }
    const FinalRead& f = *k.final_read;
    if (!f.is_list) {
      undecided(key, "final-read-not-a-list", k.ok_writes.size() + k.failed_writes.size(), nullptr, &f,
                "the lost-update rule of " + key + " is undecided: its final read (" + describe_read(f) +
                    ") returned something that is not a list");
      return;
    }
    std::unordered_set<std::string> present(f.items.begin(), f.items.end());
    const Write* first_beyond = nullptr;
    std::uint64_t beyond = 0;
    for (const Write& w : k.ok_writes) {
      if (present.contains(w.element)) {
        ++judged_;
        continue;
      }
      if (w.completed >= f.invoked) {
        if (++beyond == 1) first_beyond = &w;
        continue;
      }
      ++judged_;
      add(w.completed, write_violation("lost-update", key, w, f,
                                       "the ok write of " + bounded_text(w.element) + " to " + key + " by " +
                                           describe_process(w.process, nodes_.name(w.node)) + " at " +
                                           format_seconds(w.completed) + " is missing from the final read (" +
                                           describe_read(f) + ")"));
    }
    for (const Write& w : k.failed_writes) {
      if (!present.contains(w.element)) continue;
      add(w.completed, write_violation("failed-write-visible", key, w, f,
                                       "the failed write of " + bounded_text(w.element) + " to " + key + " by " +
                                           describe_process(w.process, nodes_.name(w.node)) + " at " +
                                           format_seconds(w.completed) + " appears in the final read"));
    }
    if (first_beyond == nullptr) return;
    const Write& w = *first_beyond;
    undecided(key, "write-after-final-read", beyond, &w, &f,
              "the lost-update rule of " + key + " is undecided: the ok write of " + bounded_text(w.element) +
                  " by " + describe_process(w.process, nodes_.name(w.node)) + " (index " +
                  std::to_string(w.index) + ") completed at " + format_seconds(w.completed) +
                  ", not before the last ok read of " + key + " was invoked (" + describe_read(f) +
                  "), and its element is not in that read; no read of " + key +
                  " was taken after it (the run may have been cut short)" +
                  (beyond > 1 ? "; " + std::to_string(beyond) + " such writes" : ""));
  }

  void undecided(const std::string& key, const char* kind, std::uint64_t writes, const Write* w,
                 const FinalRead* f, std::string message) {
    ++undecided_keys_;
    undecided_writes_ += writes;
    if (undecided_.size() >= max_violations_) return;
    nlohmann::json j = {{"kind", kind}, {"key", key}, {"writes", writes}};
    if (w != nullptr) j["write"] = write_json(*w);
    if (f != nullptr) j["final_read"] = read_json(*f);
    j["message"] = std::move(message);
    undecided_.push_back(std::move(j));
  }

  // "index 41 by process 3 (c3), invoked at 12.300 s"
  std::string describe_read(const FinalRead& f) const {
    return "index " + std::to_string(f.index) + " by " + describe_process(f.process, nodes_.name(f.node)) +
           ", invoked at " + format_seconds(f.invoked);
  }

  nlohmann::json write_json(const Write& w) const {
    return {{"process", w.process}, {"node", nodes_.name(w.node)}, {"index", w.index}, {"completed", w.completed},
            {"token", w.token ? nlohmann::json(*w.token) : nlohmann::json()}};
  }
  nlohmann::json read_json(const FinalRead& f) const {
    return {{"process", f.process}, {"node", nodes_.name(f.node)}, {"invoke_index", f.invoke_index},
            {"index", f.index}, {"invoked", f.invoked}, {"completed", f.completed}};
  }

  nlohmann::json write_violation(const char* kind, const std::string& key, const Write& w, const FinalRead& f,
                                 const std::string& message) const {
    return {{"kind", kind},          {"key", key},       {"element", bounded_json(w.element)},
            {"write", write_json(w)}, {"final_read_index", f.index}, {"final_read", read_json(f)},
            {"message", message}};
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
  nlohmann::json undecided_ = nlohmann::json::array();  // the first max_violations_ undecided keys
  std::uint64_t undecided_keys_ = 0;
  std::uint64_t undecided_writes_ = 0;  // writes of undecided keys that were not judged
  std::uint64_t judged_ = 0;
  std::uint64_t count_ = 0;
  std::uint64_t log_entries_ = 0;
  std::uint64_t cas_applied_ = 0;
};

}  // namespace

std::unique_ptr<Checker> make_resource_checker(const CheckOptions& options) {
  return std::make_unique<ResourceChecker>(options);
}

}  // namespace fencecheck
