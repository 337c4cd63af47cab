#include "checkers/check.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <new>
#include <stdexcept>

#include "checkers/edn/edn_history_reader.h"
#include "checkers/history_reader.h"
#include "checkers/registry.h"

namespace fencecheck {
namespace {

std::unique_ptr<EventSource> open_history(const CheckRequest& req) {
  if (req.format == "jsonl") return std::make_unique<HistoryReader>(req.history);
  if (req.format == "edn") return std::make_unique<EdnHistoryReader>(req.history);
  throw std::invalid_argument("unknown history format \"" + req.format + "\" (expected jsonl or edn)");
}

// A checker in the pass. One that throws is out of it at once: its result becomes
// unknown, and it is destroyed so that whatever it held (after a std::bad_alloc, a lot)
// goes back to the checkers still running.
struct Running {
  std::string name;
  std::unique_ptr<Checker> checker;
  std::string failure;  // what() of the exception that stopped it

  template <typename Call>
  void guarded(Call&& call) {
    if (!checker) return;
    try {
      call(*checker);
      return;
    } catch (const std::bad_alloc&) {
      checker.reset();  // its memory back first: the message below allocates
      failure = "out of memory (std::bad_alloc)";
      return;
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "an exception that is not a std::exception";
    }
    checker.reset();
  }

  CheckResult finish() {
    CheckResult r;
    guarded([&](Checker& c) { r = c.finish(); });
    if (checker) return r;
    r = CheckResult{};
    r.verdict = Verdict::kUnknown;
    r.summary = "the " + name + " checker failed: " + failure;
    return r;
  }
};

std::vector<NamedChecker> make_checkers(const CheckRequest& req) {
  std::vector<const CheckerInfo*> chosen;
  if (req.checkers.empty()) {
    for (const auto& c : checker_registry()) chosen.push_back(&c);
  } else {
    for (const auto& name : req.checkers) {
      const CheckerInfo* c = find_checker(name);
      if (c == nullptr) {
        throw std::invalid_argument("unknown checker \"" + name + "\"; valid names: " + checker_names());
      }
      chosen.push_back(c);
    }
  }
  std::vector<NamedChecker> checkers;
  for (const CheckerInfo* c : chosen) checkers.push_back({c->name, c->make(req.options)});
  return checkers;
}

}  // namespace

Verdict CheckReport::overall() const {
  bool unknown = !unknown_reasons.empty();
  for (const auto& [name, r] : results) {
    if (r.verdict == Verdict::kInvalid) return Verdict::kInvalid;
    unknown |= r.verdict == Verdict::kUnknown;
  }
  return unknown ? Verdict::kUnknown : Verdict::kValid;
}

int CheckReport::exit_code() const {
  switch (overall()) {
    case Verdict::kInvalid: return 1;
    case Verdict::kUnknown: return 2;
    default: return 0;
  }
}

nlohmann::json CheckReport::to_json(const CheckRequest& req) const {
  nlohmann::json j;
  Verdict v = overall();
  j["valid"] = v == Verdict::kUnknown ? nlohmann::json("unknown") : nlohmann::json(v == Verdict::kValid);
  j["checkers"] = nlohmann::json::object();
  for (const auto& [name, r] : results) j["checkers"][name] = r.to_json();
  j["unknown_reasons"] = unknown_reasons;
  j["history"] = {{"file", req.history}, {"format", req.format}, {"events", events},
                  {"client_events", client_events}};
  if (req.resource) j["resource_log"] = {{"file", *req.resource}, {"entries", resource_entries}};
  j["warnings"] = warnings;
  j["check_seconds"] = seconds;
  return j;
}

std::string CheckReport::summary() const {
  std::string s;
  for (const auto& [name, r] : results) {
    std::string line = name;
    line.resize(std::max<std::size_t>(line.size() + 1, 14), ' ');
    std::string verdict(to_string(r.verdict));
    verdict.resize(9, ' ');
    line += verdict;
    if (r.verdict == Verdict::kInvalid) {
      line += !r.count_text.empty() ? r.count_text
                                    : std::to_string(r.count) + (r.count == 1 ? " violation" : " violations");
      if (r.violations.size() < r.count) {
        line += " (showing " + std::to_string(r.violations.size()) + " of " + std::to_string(r.count) + ")";
      }
      line += r.count == 1 ? ": " : ", first: ";
    }
    s += line + r.summary + "\n";
  }
  for (const auto& reason : unknown_reasons) s += "undecided: " + reason + "\n";
  for (const auto& w : warnings) s += "warning: " + w + "\n";
  return s;
}

CheckReport run_checks(const CheckRequest& req) { return run_checks(req, make_checkers(req)); }

CheckReport run_checks(const CheckRequest& req, std::vector<NamedChecker> named) {
  auto start = std::chrono::steady_clock::now();
  std::vector<Running> checkers;
  for (auto& n : named) checkers.push_back(Running{std::move(n.name), std::move(n.checker), ""});

  CheckReport report;
  {
    auto source = open_history(req);
    Event e;
    while (source->next(e)) {
      ++report.events;
      report.client_events += e.is_client();
      for (auto& c : checkers) c.guarded([&](Checker& k) { k.observe(e); });
    }
    report.warnings = source->warnings();
  }
  if (report.client_events == 0) report.unknown_reasons.push_back("the history has no client operations");
  if (req.resource) {
    ResourceLogReader log(*req.resource);
    ResourceEntry r;
    while (log.next(r)) {
      ++report.resource_entries;
      for (auto& c : checkers) c.guarded([&](Checker& k) { k.observe_resource(r); });
    }
    for (const auto& w : log.warnings()) report.warnings.push_back(w);
  }
  for (auto& c : checkers) report.results.emplace_back(c.name, c.finish());
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace fencecheck
