#include "harness/shrink/shrink.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

namespace fencecheck {
namespace {

// One search in progress: the tries so far, the kept candidate, the budget.
class Search {
 public:
  Search(Replayer& replayer, ShrinkResult& result) : replayer_(replayer), r_(result) {}

  // Whether another try may start; sets budget_exhausted when not.
  bool may_try() {
    if (r_.options.budget_s && r_.seconds > *r_.options.budget_s) r_.budget_exhausted = true;
    return !r_.budget_exhausted;
  }

  TryOutcome run_once(const ShrinkCandidate& c, int attempt) {
    TryOutcome o = replayer_.try_once(c, attempt);
    r_.seconds += o.seconds;
    return o;
  }

  // Tries c up to `tries` times, stopping at the first reproduction; logs the step. A
  // kept candidate becomes the final one.
  bool attempt(const std::string& phase, const ShrinkCandidate& c) {
    ShrinkStep step{phase, c, {}, false, false};
    for (int i = 0; i < r_.options.tries && !step.kept; ++i) {
      if (!may_try()) {
        step.cut_by_budget = true;
        break;
      }
      step.outcomes.push_back(run_once(c, i));
      step.kept = step.outcomes.back().reproduced;
    }
    if (step.outcomes.empty()) return false;  // not tried at all: not a step
    if (step.kept) r_.final_candidate = c;
    r_.steps.push_back(std::move(step));
    return r_.steps.back().kept;
  }

  bool stopped() const { return r_.budget_exhausted; }

 private:
  Replayer& replayer_;
  ShrinkResult& r_;
};

// ddmin over the kept faults (complements after chunks), at the kept length.
void shrink_faults(Search& s, ShrinkResult& r) {
  std::set<std::vector<std::size_t>> tried{r.final_candidate.faults};
  // Tries a fault set not tried before; true if it reproduced (it is then kept).
  auto test = [&](const std::string& phase, std::vector<std::size_t> faults) {
    if (!tried.insert(faults).second) return false;
    double length = r.final_candidate.length_s;
    if (r.options.fit_length) length = std::min(length, r.options.fit_length(faults));
    return s.attempt(phase, ShrinkCandidate{std::move(faults), length});
  };
  std::size_t n = 2;
  while (r.final_candidate.faults.size() >= 2 && !s.stopped()) {
    const std::vector<std::size_t> kept = r.final_candidate.faults;
    const std::size_t size = kept.size();
    n = std::min(n, size);
    std::vector<std::vector<std::size_t>> chunks(n), complements(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t from = i * size / n, to = (i + 1) * size / n;
      for (std::size_t j = 0; j < size; ++j) (j >= from && j < to ? chunks : complements)[i].push_back(kept[j]);
    }
    bool reduced = false;
    for (std::size_t i = 0; i < n && !reduced && !s.stopped(); ++i) {
      if (test("faults", chunks[i])) {
        reduced = true;
        n = 2;
      }
    }
    // With two chunks each complement is the other chunk, already tried.
    for (std::size_t i = 0; n > 2 && i < n && !reduced && !s.stopped(); ++i) {
      if (test("faults", complements[i])) {
        reduced = true;
        n = std::max<std::size_t>(n - 1, 2);
      }
    }
    if (reduced) continue;
    if (n >= size) break;
    n = std::min(2 * n, size);
  }
  if (r.final_candidate.faults.size() == 1 && !s.stopped()) test("no_faults", {});
}

// The floor first, then bisection between a failing and the kept length.
void shrink_length(Search& s, ShrinkResult& r) {
  const ShrinkOptions& o = r.options;
  double floor = o.min_length_s;
  if (o.length_floor) floor = std::max(floor, o.length_floor(r.final_candidate));
  if (floor > r.final_candidate.length_s - o.length_resolution_s) return;
  auto at = [&](double length) { return ShrinkCandidate{r.final_candidate.faults, length}; };
  if (s.attempt("length", at(floor))) return;
  double failing = floor;
  while (r.final_candidate.length_s - failing > o.length_resolution_s && !s.stopped()) {
    const double mid = (failing + r.final_candidate.length_s) / 2;
    if (!s.attempt("length", at(mid))) failing = mid;
  }
}

nlohmann::json candidate_json(const ShrinkCandidate& c) {
  return {{"faults", c.faults}, {"length_s", c.length_s}};
}

nlohmann::json outcomes_json(const std::vector<TryOutcome>& outcomes) {
  nlohmann::json a = nlohmann::json::array();
  for (const TryOutcome& o : outcomes)
    a.push_back({{"reproduced", o.reproduced}, {"seconds", o.seconds}, {"note", o.verdict_note}});
  return a;
}

}  // namespace

double ShrinkStep::seconds() const {
  double sum = 0;
  for (const TryOutcome& o : outcomes) sum += o.seconds;
  return sum;
}

int ShrinkResult::final_reproduced() const {
  return static_cast<int>(std::count_if(final_outcomes.begin(), final_outcomes.end(),
                                        [](const TryOutcome& o) { return o.reproduced; }));
}

std::string ShrinkResult::rate() const {
  return std::to_string(final_reproduced()) + "/" + std::to_string(final_outcomes.size());
}

nlohmann::json ShrinkResult::to_json() const {
  nlohmann::json steps_json = nlohmann::json::array();
  for (const ShrinkStep& s : steps) {
    nlohmann::json j = candidate_json(s.candidate);
    j["phase"] = s.phase;
    j["tries"] = outcomes_json(s.outcomes);
    j["seconds"] = s.seconds();
    j["kept"] = s.kept;
    j["cut_by_budget"] = s.cut_by_budget;
    steps_json.push_back(std::move(j));
  }
  nlohmann::json final_json = candidate_json(final_candidate);
  final_json["rate"] = rate();
  final_json["reproduced"] = final_reproduced();
  final_json["tries"] = outcomes_json(final_outcomes);
  return {
      {"original", candidate_json(original)},
      {"options",
       {{"tries", options.tries},
        {"budget_s", options.budget_s ? nlohmann::json(*options.budget_s) : nlohmann::json(nullptr)},
        {"min_length_s", options.min_length_s},
        {"length_resolution_s", options.length_resolution_s}}},
      {"steps", std::move(steps_json)},
      {"final", std::move(final_json)},
      {"never_reproduced", never_reproduced},
      {"budget_exhausted", budget_exhausted},
      {"stopped_by", stopped_by},
      {"seconds", seconds},
  };
}

ShrinkResult shrink(std::size_t fault_count, double length_s, Replayer& replayer,
                    const ShrinkOptions& options) {
  if (options.tries < 1) throw std::invalid_argument("shrink: tries must be at least 1");
  if (!(length_s > 0)) throw std::invalid_argument("shrink: the test length must be positive");
  if (!(options.length_resolution_s > 0))
    throw std::invalid_argument("shrink: the length resolution must be positive");
  if (options.budget_s && !(*options.budget_s >= 0))
    throw std::invalid_argument("shrink: the budget must not be negative");

  ShrinkResult r;
  r.options = options;
  for (std::size_t i = 0; i < fault_count; ++i) r.original.faults.push_back(i);
  r.original.length_s = length_s;
  r.final_candidate = r.original;
  Search s(replayer, r);
  try {
    if (!s.attempt("original", r.original)) {
      // Every try ran and none reproduced: nothing to shrink, and its tries are the rate.
      if (!r.steps.empty() && !r.steps.back().cut_by_budget) {
        r.never_reproduced = true;
        r.final_outcomes = r.steps.back().outcomes;
      }
      return r;
    }
    shrink_faults(s, r);
    if (!s.stopped()) shrink_length(s, r);
    for (int i = 0; i < options.tries && s.may_try(); ++i)
      r.final_outcomes.push_back(s.run_once(r.final_candidate, i));
  } catch (const std::exception& e) {  // the search so far stands: the caller writes it down
    r.stopped_by = e.what();
  }
  return r;
}

bool ShrinkResult::reproduced_any() const {
  return std::any_of(steps.begin(), steps.end(), [](const ShrinkStep& s) { return s.kept; });
}

}  // namespace fencecheck
