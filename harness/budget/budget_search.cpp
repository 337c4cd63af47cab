#include "harness/budget/budget_search.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace fencecheck {

std::string to_string(BreaksWhere w) { return w == BreaksWhere::kAbove ? "above" : "below"; }

std::string to_string(ProbeTry::Result r) {
  switch (r) {
    case ProbeTry::Result::kSafe: return "safe";
    case ProbeTry::Result::kBroke: return "broke";
    case ProbeTry::Result::kUndecided: return "undecided";
    case ProbeTry::Result::kHarnessError: return "harness-error";
  }
  return "unknown";
}

std::string to_string(Probe::Verdict v) {
  switch (v) {
    case Probe::Verdict::kSafe: return "safe";
    case Probe::Verdict::kBroken: return "broken";
    case Probe::Verdict::kUndecided: return "undecided";
    case Probe::Verdict::kCutShort: return "cut-short";
  }
  return "unknown";
}

std::string to_string(BudgetResult::Outcome o) {
  switch (o) {
    case BudgetResult::Outcome::kBoundary: return "boundary";
    case BudgetResult::Outcome::kSafeEverywhere: return "safe-everywhere";
    case BudgetResult::Outcome::kBrokenEverywhere: return "broken-everywhere";
    case BudgetResult::Outcome::kUndecided: return "undecided";
  }
  return "unknown";
}

namespace {

bool is_decided(const ProbeTry& t) {
  return t.result == ProbeTry::Result::kSafe || t.result == ProbeTry::Result::kBroke;
}

const Probe* probe_at(const BudgetResult& r, std::int64_t magnitude) {
  for (const Probe& p : r.probes) {
    if (p.magnitude == magnitude) return &p;
  }
  return nullptr;
}

// How many of the probe's decided tries back its verdict: "5/5 tries" (safe), "1/1" (broken).
std::string counts(const BudgetResult& r, std::int64_t magnitude, bool safe) {
  const Probe* p = probe_at(r, magnitude);
  if (!p) return "not probed";
  return std::to_string(safe ? p->decided() - p->broke() : p->broke()) + "/" + std::to_string(p->decided()) +
         (safe ? " tries" : "");
}

// "safe at 900 ms in 5/5 tries", "broken at 1000 ms in 1/1".
std::string evidence(const BudgetResult& r, std::int64_t magnitude, bool safe) {
  return std::string(safe ? "safe" : "broken") + " at " + std::to_string(magnitude) + " ms in " +
         counts(r, magnitude, safe);
}

// Why an undecided search ended, and the bracket so far.
std::string why_undecided(const BudgetResult& r) {
  std::ostringstream s;
  if (!r.probes.empty() && r.probes.back().verdict == Probe::Verdict::kUndecided) {
    const Probe& p = r.probes.back();
    const int undecided = static_cast<int>(p.tries.size()) - p.decided();
    s << "the probe at " << p.magnitude << " ms had " << undecided << " undecided tries";
  } else if (!r.stopped_by.empty()) {
    s << "stopped by " << r.stopped_by;
  } else if (r.budget_exhausted) {
    s << "the budget of " << r.options.budget_s.value_or(0) << " s ran out after " << static_cast<long long>(r.seconds)
      << " s";
  } else {
    s << "the search ended early";
  }
  if (r.safe_at) s << "; " << evidence(r, *r.safe_at, true);
  if (r.broken_at) s << "; " << evidence(r, *r.broken_at, false);
  return s.str();
}

// One search in progress: probes magnitudes, keeps the bracket and the record in `r`.
class Search {
 public:
  Search(Prober& prober, BudgetResult& r)
      : prober_(prober),
        r_(r),
        breaking_end_(r.options.breaks == BreaksWhere::kAbove ? r.options.hi : r.options.lo),
        safe_end_(r.options.breaks == BreaksWhere::kAbove ? r.options.lo : r.options.hi) {}

  // The steps at the top of budget_search.h.
  BudgetResult::Outcome run() {
    bool go_on = probe(breaking_end_);
    if (r_.safe_at) return BudgetResult::Outcome::kSafeEverywhere;
    if (!go_on) return outcome_when_cut();
    go_on = probe(safe_end_);
    if (r_.broken_at == safe_end_) return BudgetResult::Outcome::kBrokenEverywhere;
    if (!go_on) return outcome_when_cut();
    while (std::abs(*r_.broken_at - *r_.safe_at) > r_.options.resolution) {
      const std::int64_t mid = *r_.safe_at + (*r_.broken_at - *r_.safe_at) / 2;  // strictly between: the gap is >= 2
      if (!probe(mid)) return outcome_when_cut();
    }
    return BudgetResult::Outcome::kBoundary;
  }

 private:
  static constexpr int kMaxHarnessErrors = 3;

  // Probes x and files it in the bracket. False when the search ends here: the probe was
  // undecided, or the budget or a stop cut the search.
  bool probe(std::int64_t x) {
    Probe p;
    p.magnitude = x;
    while (!ended_ && !probe_done(p) && may_try()) run_try(p);
    p.verdict = verdict_of(p);
    if (p.verdict == Probe::Verdict::kSafe) r_.safe_at = x;
    if (p.verdict == Probe::Verdict::kBroken) r_.broken_at = x;
    if (p.verdict == Probe::Verdict::kUndecided) bench_failed_ = true;
    if (!p.tries.empty()) r_.probes.push_back(std::move(p));  // a probe never tried is no probe
    return !ended_ && !bench_failed_;
  }

  // A known bracket stands when the budget or the Prober cut the search; not when the
  // bench failed (an undecided probe, harness errors in a row).
  BudgetResult::Outcome outcome_when_cut() const {
    return r_.safe_at && r_.broken_at && !bench_failed_ ? BudgetResult::Outcome::kBoundary
                                                        : BudgetResult::Outcome::kUndecided;
  }

  static int undecided(const Probe& p) { return static_cast<int>(p.tries.size()) - p.decided(); }

  bool probe_done(const Probe& p) const {
    if (r_.options.stop_at_first_break && p.broke() > 0) return true;
    return p.decided() >= r_.options.tries || undecided(p) >= r_.options.tries;
  }

  // A violation is proof even in a probe the budget or a stop cut short.
  Probe::Verdict verdict_of(const Probe& p) const {
    if (p.broke() > 0) return Probe::Verdict::kBroken;
    if (p.decided() >= r_.options.tries) return Probe::Verdict::kSafe;
    if (undecided(p) >= r_.options.tries) return Probe::Verdict::kUndecided;
    return Probe::Verdict::kCutShort;
  }

  // Whether another try may start; ends the search (budget_exhausted) when not.
  bool may_try() {
    if (r_.options.budget_s && r_.seconds >= *r_.options.budget_s) {
      r_.budget_exhausted = true;
      ended_ = true;
    }
    return !ended_;
  }

  void run_try(Probe& p) {
    try {
      p.tries.push_back(prober_.try_at(p.magnitude, static_cast<int>(p.tries.size())));
    } catch (const std::exception& e) {
      return stop(*e.what() ? e.what() : "the prober's exception");
    } catch (...) {
      return stop("the prober's exception");
    }
    r_.seconds += p.tries.back().seconds;
    harness_errors_ = p.tries.back().result == ProbeTry::Result::kHarnessError ? harness_errors_ + 1 : 0;
    if (harness_errors_ >= kMaxHarnessErrors) {
      bench_failed_ = true;
      stop(std::to_string(kMaxHarnessErrors) + " harness errors in a row");
    }
    report_progress(p);
  }

  // The search so far, the probe in progress included (cut-short until it is settled).
  void report_progress(const Probe& in_progress) const {
    if (!r_.options.on_try) return;
    BudgetResult so_far = r_;
    so_far.probes.push_back(in_progress);
    so_far.probes.back().verdict = verdict_of(in_progress);
    r_.options.on_try(so_far);
  }

  void stop(std::string why) {
    r_.stopped_by = std::move(why);
    ended_ = true;
  }

  Prober& prober_;
  BudgetResult& r_;
  const std::int64_t breaking_end_, safe_end_;
  bool ended_ = false;        // the budget or a stop: no try starts any more
  bool bench_failed_ = false;  // an undecided probe or harness errors in a row
  int harness_errors_ = 0;     // in a row
};

void validate(const BudgetSearchOptions& o) {
  if (o.lo < 0) throw std::invalid_argument("budget: lo must be at least 0");
  if (o.lo >= o.hi) throw std::invalid_argument("budget: lo must be below hi");
  if (o.tries < 1) throw std::invalid_argument("budget: tries must be at least 1");
  if (o.resolution < 1) throw std::invalid_argument("budget: resolution must be at least 1 ms");
  if (o.budget_s && !(*o.budget_s >= 0)) throw std::invalid_argument("budget: the budget must not be negative");
}

}  // namespace

int Probe::broke() const {
  auto broke = [](const ProbeTry& t) { return t.result == ProbeTry::Result::kBroke; };
  return static_cast<int>(std::count_if(tries.begin(), tries.end(), broke));
}

int Probe::decided() const { return static_cast<int>(std::count_if(tries.begin(), tries.end(), is_decided)); }

double Probe::seconds() const {
  double total = 0;
  for (const ProbeTry& t : tries) total += t.seconds;
  return total;
}

int BudgetResult::exit_code() const {
  switch (outcome) {
    case Outcome::kBoundary: return 0;
    case Outcome::kSafeEverywhere:
    case Outcome::kBrokenEverywhere: return 1;
    case Outcome::kUndecided: return 2;
  }
  return 2;
}

std::string BudgetResult::summary() const {
  const bool above = options.breaks == BreaksWhere::kAbove;
  const std::int64_t breaking_end = above ? options.hi : options.lo, safe_end = above ? options.lo : options.hi;
  const std::string range = std::to_string(options.lo) + "\u2013" + std::to_string(options.hi) + " ms";
  std::ostringstream s;
  switch (outcome) {
    case Outcome::kBoundary:
      s << "breaks between " << std::min(*safe_at, *broken_at) << " and " << std::max(*safe_at, *broken_at) << " ms ("
        << evidence(*this, *safe_at, true) << ", " << evidence(*this, *broken_at, false) << ")";
      if (budget_exhausted || !stopped_by.empty()) {
        s << "; " << (budget_exhausted ? "the budget ran out" : "stopped by " + stopped_by);
        if (std::abs(*broken_at - *safe_at) > options.resolution) {
          s << " before the bracket narrowed to " << options.resolution << " ms";
        }
      }
      break;
    case Outcome::kSafeEverywhere:
      s << "no boundary in " << range << ": safe at every magnitude probed, " << (above ? "up to " : "down to ")
        << breaking_end << " ms (" << counts(*this, breaking_end, true) << ")";
      break;
    case Outcome::kBrokenEverywhere:
      s << "no boundary in " << range << ": broken even at " << safe_end << " ms (" << counts(*this, safe_end, false)
        << ")";
      break;
    case Outcome::kUndecided: s << "undecided: " << why_undecided(*this); break;
  }
  return s.str();
}

nlohmann::json BudgetResult::to_json() const {
  using nlohmann::json;
  auto optional_json = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  json probes_json = json::array();
  for (const Probe& p : probes) {
    json tries_json = json::array();
    for (const ProbeTry& t : p.tries) {
      tries_json.push_back({{"result", to_string(t.result)}, {"seconds", t.seconds}, {"detail", t.detail}});
    }
    probes_json.push_back({{"magnitude", p.magnitude},
                           {"verdict", to_string(p.verdict)},
                           {"broke", p.broke()},
                           {"decided", p.decided()},
                           {"seconds", p.seconds()},
                           {"tries", std::move(tries_json)}});
  }
  return {{"options",
           {{"lo", options.lo},
            {"hi", options.hi},
            {"breaks", to_string(options.breaks)},
            {"tries", options.tries},
            {"resolution", options.resolution},
            {"budget_s", optional_json(options.budget_s)},
            {"stop_at_first_break", options.stop_at_first_break}}},
          {"probes", std::move(probes_json)},
          {"outcome", to_string(outcome)},
          {"safe_at", optional_json(safe_at)},
          {"broken_at", optional_json(broken_at)},
          {"budget_exhausted", budget_exhausted},
          {"stopped_by", stopped_by},
          {"seconds", seconds},
          {"summary", summary()}};
}

BudgetResult search_budget(Prober& prober, const BudgetSearchOptions& options) {
  validate(options);
  BudgetResult r;
  r.options = options;
  r.outcome = Search(prober, r).run();
  return r;
}

}  // namespace fencecheck
