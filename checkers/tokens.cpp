// tokens: over ok acquires of one key that carry a token, no token is granted twice, and
// an acquire invoked after another completed gets a greater token (DESIGN.md).
//
// Per key: sort grants by token to find duplicates; sort by invoke and by completion and
// sweep, keeping the greatest token among grants completed strictly before each invoke.
#include <algorithm>

#include "checkers/safety.h"
#include "checkers/tracking.h"

namespace fencecheck {
namespace {

struct Grant {
  std::uint32_t key;
  std::uint32_t node;
  std::int64_t process;
  Nanos invoked;
  Nanos completed;
  std::uint64_t index;  // of the ok completion
  Token token;
};

class TokensChecker : public Checker {
 public:
  explicit TokensChecker(const CheckOptions& o) : max_violations_(o.max_violations) {}

  void observe(const Event& e) override {
    if (e.is_nemesis()) return;
    InFlightInvokes::Invoke inv = invokes_.observe(e);
    if (e.f != OpFn::kAcquire || e.type != OpType::kOk) return;
    ++ok_acquires_;
    if (!e.token) return;
    grants_.push_back(Grant{keys_.id(e.key), nodes_.id(e.node), e.process, inv.time, e.time,
                            e.index, *e.token});
  }

  CheckResult finish() override {
    CheckResult r;
    r.stats = {{"ok_acquires", ok_acquires_}, {"with_token", grants_.size()}};
    if (grants_.empty()) {
      r.verdict = Verdict::kSkipped;
      r.summary = "no ok acquire carries a token";
      return r;
    }
    std::sort(grants_.begin(), grants_.end(), [](const Grant& a, const Grant& b) {
      return a.key != b.key ? a.key < b.key : a.token < b.token;
    });
    std::vector<std::pair<Nanos, nlohmann::json>> found;  // (time seen, violation)
    for (std::size_t i = 0; i < grants_.size();) {
      std::size_t j = i;
      while (j < grants_.size() && grants_[j].key == grants_[i].key) ++j;
      r.count += check_key(i, j, found);
      i = j;
    }
    std::sort(found.begin(), found.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    if (found.size() > max_violations_) found.resize(max_violations_);
    if (!found.empty()) r.first_violation_at = found.front().first;
    for (auto& f : found) r.violations.push_back(std::move(f.second));
    r.verdict = r.count == 0 ? Verdict::kValid : Verdict::kInvalid;
    r.summary = r.count == 0 ? std::to_string(grants_.size()) + " tokens on " +
                                   std::to_string(keys_.size()) + " key(s), unique and increasing"
                             : r.violations.front()["message"].get<std::string>();
    return r;
  }

 private:
  // Grants [i, j) of one key, sorted by token.
  std::uint64_t check_key(std::size_t i, std::size_t j,
                          std::vector<std::pair<Nanos, nlohmann::json>>& found) {
    std::uint64_t count = 0;
    std::size_t kept = 0;
    auto keep = [&](Nanos t, nlohmann::json v) {
      ++count;
      if (kept++ < max_violations_) found.emplace_back(t, std::move(v));
    };
    for (std::size_t k = i + 1; k < j; ++k) {
      const Grant& a = grants_[k - 1];
      const Grant& b = grants_[k];
      if (a.token != b.token) continue;
      keep(b.completed, {{"kind", "duplicate"}, {"key", keys_.name(b.key)}, {"token", b.token},
                         {"first", grant_json(a)}, {"second", grant_json(b)},
                         {"message", describe(a) + " and " + describe(b) + " were both granted token " +
                                         std::to_string(b.token) + " on " + keys_.name(b.key)}});
    }
    std::vector<const Grant*> by_invoke, by_completion;
    for (std::size_t k = i; k < j; ++k) {
      by_invoke.push_back(&grants_[k]);
      by_completion.push_back(&grants_[k]);
    }
    std::sort(by_invoke.begin(), by_invoke.end(),
              [](const Grant* a, const Grant* b) { return a->invoked < b->invoked; });
    std::sort(by_completion.begin(), by_completion.end(),
              [](const Grant* a, const Grant* b) { return a->completed < b->completed; });
    const Grant* highest = nullptr;  // greatest token among grants completed so far
    std::size_t c = 0;
    for (const Grant* y : by_invoke) {
      for (; c < by_completion.size() && by_completion[c]->completed < y->invoked; ++c) {
        if (highest == nullptr || by_completion[c]->token > highest->token) highest = by_completion[c];
      }
      if (highest == nullptr || highest->token <= y->token) continue;
      keep(y->completed,
           {{"kind", "decreasing"}, {"key", keys_.name(y->key)}, {"earlier", grant_json(*highest)},
            {"later", grant_json(*y)},
            {"message", describe(*y) + " was granted token " + std::to_string(y->token) + " on " +
                            keys_.name(y->key) + " (invoked at " + format_seconds(y->invoked) +
                            ") after " + describe(*highest) + " had been granted token " +
                            std::to_string(highest->token) + " at " + format_seconds(highest->completed)}});
    }
    return count;
  }

  std::string describe(const Grant& g) const {
    return describe_process(g.process, nodes_.name(g.node));
  }

  nlohmann::json grant_json(const Grant& g) const {
    return {{"process", g.process}, {"node", nodes_.name(g.node)}, {"index", g.index},
            {"invoked", g.invoked}, {"completed", g.completed}, {"token", g.token}};
  }

  std::size_t max_violations_;
  Interner keys_;
  Interner nodes_;
  InFlightInvokes invokes_;
  std::vector<Grant> grants_;
  std::uint64_t ok_acquires_ = 0;
};

}  // namespace

std::unique_ptr<Checker> make_tokens_checker(const CheckOptions& options) {
  return std::make_unique<TokensChecker>(options);
}

}  // namespace fencecheck
