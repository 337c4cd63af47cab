#include "checkers/check.h"

#include <chrono>
#include <filesystem>
#include <memory>
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

}  // namespace

Verdict CheckReport::overall() const {
  bool unknown = false;
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
  j["history"] = {{"file", req.history}, {"format", req.format}, {"events", events}};
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
      line += std::to_string(r.count) + (r.count == 1 ? " violation: " : " violations, first: ");
    }
    s += line + r.summary + "\n";
  }
  for (const auto& w : warnings) s += "warning: " + w + "\n";
  return s;
}

CheckReport run_checks(const CheckRequest& req) {
  auto start = std::chrono::steady_clock::now();
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
  std::vector<std::unique_ptr<Checker>> checkers;
  for (const CheckerInfo* c : chosen) checkers.push_back(c->make(req.options));

  CheckReport report;
  {
    auto source = open_history(req);
    Event e;
    while (source->next(e)) {
      ++report.events;
      for (auto& c : checkers) c->observe(e);
    }
    report.warnings = source->warnings();
  }
  if (req.resource) {
    ResourceLogReader log(*req.resource);
    ResourceEntry r;
    while (log.next(r)) {
      ++report.resource_entries;
      for (auto& c : checkers) c->observe_resource(r);
    }
    for (const auto& w : log.warnings()) report.warnings.push_back(w);
  }
  for (std::size_t i = 0; i < checkers.size(); ++i) {
    report.results.emplace_back(chosen[i]->name, checkers[i]->finish());
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace fencecheck
