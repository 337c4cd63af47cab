#include "checkers/linear/linearizable_checker.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "checkers/linear/explain.h"
#include "checkers/linear/models.h"
#include "checkers/linear/op_collector.h"
#include "checkers/linear/search.h"

namespace fencecheck {

using linear::ModelKind;
using linear::Partition;
using linear::SearchOutcome;
using Result = SearchOutcome::Result;

bool is_known_model(std::string_view name) {
  ModelKind m;
  return name.empty() || linear::parse_model(name, m);
}

std::vector<std::string> model_name_list() {
  std::vector<std::string> names;
  for (ModelKind m : linear::kAllModels) names.emplace_back(linear::to_string(m));
  return names;
}

std::string model_names() {
  std::string s;
  for (const std::string& n : model_name_list()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

namespace {

// Lock ops win over register ops: in lock workloads the lock is what is under test.
ModelKind choose_model(const linear::CollectedCounts& c, std::string& why) {
  if (c.lock_ops) {
    why = c.tokens ? "acquire/release with tokens" : "acquire/release without tokens";
    return c.tokens ? ModelKind::kFencedMutex : ModelKind::kMutex;
  }
  if (c.cas_ops) {
    why = "cas ops";
    return ModelKind::kCasRegister;
  }
  why = "read/write ops";
  return ModelKind::kRegister;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string bytes_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

std::string_view result_name(Result r) {
  switch (r) {
    case Result::kLinearizable: return "linearizable";
    case Result::kNotLinearizable: return "not linearizable";
    case Result::kOutOfTime: return "out of time";
    case Result::kOutOfMemory: return "out of memory";
    case Result::kStopped: return "stopped";
  }
  return "?";
}

class LinearizableChecker : public Checker {
 public:
  LinearizableChecker(const CheckOptions& opts, unsigned threads) : opts_(opts), threads_(threads) {
    if (!opts.model.empty() && !linear::parse_model(opts.model, model_)) {
      throw std::invalid_argument("unknown model \"" + opts.model + "\" (known: " + model_names() + ")");
    }
  }

  void observe(const Event& e) override { collector_.observe(e); }


  CheckResult finish() override {
    auto start = std::chrono::steady_clock::now();
    std::vector<Partition> parts = collector_.take_partitions();
    const linear::CollectedCounts& counts = collector_.counts();
    std::string chosen = "given as an option";
    if (opts_.model.empty()) chosen = "chosen from the history: " + choose(counts);
    const std::string model(linear::to_string(model_));
    std::erase_if(parts, [&](const Partition& p) {
      return std::none_of(p.ops.begin(), p.ops.end(),
                          [&](const linear::LinOp& op) { return linear::model_applies(model_, op.kind); });
    });
    CheckResult r;
    r.stats = {{"model", model}, {"model_chosen", chosen}, {"keys", parts.size()},
               {"fail_ops_dropped", counts.fail_dropped},
               {"info_reads_dropped", counts.info_reads_dropped},
               {"ops_cut_short", counts.cut_short},
               {"releases_implied_by_retirement", counts.implied_releases}};
    if (parts.empty()) {
      r.verdict = Verdict::kSkipped;
      r.summary = "Skipped: the history has no op of the " + model + " model (" + chosen + ").";
      return r;
    }
    std::vector<SearchOutcome> outcomes = search_all(parts, r.stats);
    r.stats["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    summarize(parts, outcomes, chosen, r);
    return r;
  }

 private:
  std::string choose(const linear::CollectedCounts& c) {
    std::string why;
    model_ = choose_model(c, why);
    return why;
  }

  // Biggest keys first, so that one long key does not start last and finish alone.
  std::vector<SearchOutcome> search_all(const std::vector<Partition>& parts, nlohmann::json& stats) {
    std::vector<std::size_t> order(parts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return parts[a].ops.size() > parts[b].ops.size(); });
    linear::SearchBudget budget;
    budget.set_time_limit(opts_.time_limit_s);
    budget.memory_limit = opts_.memory_limit_bytes;
    std::vector<SearchOutcome> outcomes(parts.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      linear::PartitionSearcher searcher(model_, budget);  // reuses one search's memory for the next
      for (std::size_t k; (k = next.fetch_add(1)) < order.size();) {
        std::size_t i = order[k];
        try {
          outcomes[i] = searcher.search(parts[i]);
        } catch (const std::bad_alloc&) {
          outcomes[i].result = Result::kOutOfMemory;
        }
      }
    };
    unsigned n = threads_ != 0 ? threads_ : std::max(1U, std::thread::hardware_concurrency());
    n = static_cast<unsigned>(std::min<std::size_t>(n, parts.size()));
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
    work();
    pool.clear();
    stats["threads"] = n;
    return outcomes;
  }

  void summarize(const std::vector<Partition>& parts, const std::vector<SearchOutcome>& outcomes,
                 const std::string& chosen, CheckResult& r) const {
    const std::string model(linear::to_string(model_));
    std::size_t finished = 0, ops = 0, searched = 0, memo = 0, memo_bytes = 0;
    std::uint64_t steps = 0;
    const SearchOutcome* first_unfinished = nullptr;
    std::size_t first_unfinished_key = 0;
    nlohmann::json unfinished = nlohmann::json::array();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const SearchOutcome& o = outcomes[i];
      ops += o.ops;
      searched += o.searched;
      memo += o.memo_entries;
      memo_bytes += o.memo_bytes;
      steps += o.steps;
      if (o.result == Result::kNotLinearizable) {
        ++r.count;
        if (r.violations.size() < opts_.max_violations) {
          r.violations.push_back(linear::violation_to_json(parts[i], o, model_));
          const nlohmann::json& op = r.violations.back()["op"];
          const nlohmann::json& t = op["complete_time"].is_number() ? op["complete_time"] : op["invoke_time"];
          if (t.is_number() && (!r.first_violation_at || t.get<Nanos>() < *r.first_violation_at)) {
            r.first_violation_at = t.get<Nanos>();
          }
        }
        if (r.count == 1) r.summary = linear::violation_sentence(parts[i], o, model_);
      }
      if (o.result == Result::kLinearizable || o.result == Result::kNotLinearizable) {
        ++finished;
        continue;
      }
      if (!first_unfinished) {
        first_unfinished = &o;
        first_unfinished_key = i;
      }
      unfinished.push_back({{"key", parts[i].key}, {"result", result_name(o.result)}, {"ops", o.ops},
                            {"deepest_prefix", o.deepest}, {"seconds", o.seconds}});
    }
    r.stats.update({{"keys_finished", finished}, {"ops", ops}, {"ops_searched", searched},
                    {"useless_info_ops_left_out", ops - searched}, {"steps", steps},
                    {"memo_entries", memo}, {"memo_bytes", memo_bytes},
                    {"unfinished", unfinished}});
    const std::string keys = std::to_string(parts.size()) + (parts.size() == 1 ? " key" : " keys");
    if (r.count > 0) {
      r.verdict = Verdict::kInvalid;
      r.summary += ' ';
      r.summary += std::to_string(r.count) + " of " + keys + (r.count == 1 ? " is" : " are") +
                   " not linearizable (model " + model + ", " + chosen + ").";
    } else if (first_unfinished) {
      r.verdict = Verdict::kUnknown;
      const SearchOutcome& o = *first_unfinished;
      std::string limit = o.result == Result::kOutOfMemory
                              ? "the memory limit of " + bytes_text(opts_.memory_limit_bytes)
                              : "the time limit of " + seconds_text(opts_.time_limit_s);
      r.summary = "Could not decide within " + limit + ": " + std::to_string(finished) + " of " + keys +
                  " finished; key \"" + parts[first_unfinished_key].key + "\" stopped after a linearizable prefix of " +
                  std::to_string(o.deepest) + " of its " + std::to_string(o.ops) + " ops (model " + model + ", " +
                  chosen + ").";
    } else {
      r.verdict = Verdict::kValid;
      r.summary = (parts.size() == 1 ? "The key is" : "All " + keys + " are") + " linearizable as a " + model + " (" + chosen + "): " + std::to_string(ops) +
                  " ops checked.";
    }
  }

 private:
  CheckOptions opts_;
  unsigned threads_;
  ModelKind model_ = ModelKind::kMutex;
  linear::OpCollector collector_;
};

}  // namespace

std::unique_ptr<Checker> make_linearizable_checker_on_threads(const CheckOptions& opts, unsigned threads) {
  return std::make_unique<LinearizableChecker>(opts, threads);
}

std::unique_ptr<Checker> make_linearizable_checker(const CheckOptions& opts) {
  return make_linearizable_checker_on_threads(opts, 0);
}

}  // namespace fencecheck
