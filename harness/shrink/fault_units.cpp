#include "harness/shrink/fault_units.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "nemesis/fault_registry.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

// The lines after which a family has nothing in force (a kill-session is over once done).
bool ends_fault(const std::string& f) {
  static const std::set<std::string> kEnds = {"resume", "heal", "ready", "clock-reset", "kill-session",
                                                     "memory-relieved"};
  return kEnds.contains(f);
}

// How far earlier the kept units move: their first line to lead_in, never later.
TimeSource::Duration shift_of(const std::vector<FaultUnit>& units, const std::vector<std::size_t>& kept,
                              milliseconds lead_in) {
  if (kept.empty()) return TimeSource::Duration(0);
  TimeSource::Duration first = units.at(kept.front()).lines.front().after;
  for (std::size_t k : kept) first = std::min(first, units.at(k).lines.front().after);
  return std::max(TimeSource::Duration(0), first - std::chrono::duration_cast<TimeSource::Duration>(lead_in));
}

}  // namespace

std::string FaultUnit::describe() const {
  if (lines.empty()) return family;
  char at[48];
  std::snprintf(at, sizeof at, " at %.1f s:", std::chrono::duration<double>(lines.front().after).count());
  std::string s = lines.front().value.value("fault", family) + at;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    s += (i == 0 ? " " : ", ") + lines[i].f;
    const nlohmann::json& targets = lines[i].value.value("targets", nlohmann::json::array());
    for (const auto& t : targets) s += t.is_string() ? " " + t.get<std::string>() : "";
  }
  return s;
}

std::vector<FaultUnit> group_fault_units(const std::vector<ReplayLine>& lines) {
  std::vector<FaultUnit> units;
  std::map<std::string, std::size_t> open;  // family → its unit still in force
  for (const ReplayLine& line : lines) {
    const FaultInfo* info = find_fault(line.value.value("fault", ""));
    const std::string family = info != nullptr ? info->family : line.value.value("fault", "");
    auto it = open.find(family);
    if (it == open.end()) {
      units.push_back(FaultUnit{family, {}});
      it = open.emplace(family, units.size() - 1).first;
    }
    units[it->second].lines.push_back(line);
    if (ends_fault(line.f)) open.erase(it);
  }
  return units;
}

nlohmann::json plan_of_units(const std::vector<FaultUnit>& units, const std::vector<std::size_t>& kept,
                             milliseconds lead_in) {
  std::vector<ReplayLine> all;
  for (std::size_t k : kept) all.insert(all.end(), units.at(k).lines.begin(), units.at(k).lines.end());
  std::stable_sort(all.begin(), all.end(), [](const ReplayLine& a, const ReplayLine& b) { return a.after < b.after; });
  const TimeSource::Duration shift = shift_of(units, kept, lead_in);
  nlohmann::json plan = nlohmann::json::array();
  for (const ReplayLine& l : all) {
    plan.push_back({{"at_ms", std::chrono::duration_cast<milliseconds>(l.after - shift).count()},
                    {"do", "replay"},
                    {"f", l.f},
                    {"value", l.value}});
  }
  return plan;
}

double fitted_length_s(const std::vector<FaultUnit>& units, const std::vector<std::size_t>& kept,
                       milliseconds lead_in, milliseconds margin) {
  TimeSource::Duration last(0);
  for (std::size_t k : kept) last = std::max(last, units.at(k).lines.back().after);
  const TimeSource::Duration end = kept.empty() ? TimeSource::Duration(lead_in) : last - shift_of(units, kept, lead_in);
  return std::chrono::duration<double>(end + margin).count();
}

}  // namespace fencecheck
