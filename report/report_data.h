// The data a report's script draws, as one compact JSON document for a
// <script type="application/json"> element (embed it with html.h's script_json):
// arrays of arrays with strings interned in one table, times in microseconds since the
// test start. The layout is documented at the top of report/assets/timeline.js, its only
// reader. Also the "focus" of each violation: which ops, processes, resource entries and
// time window it names, found from its fields (every checker names ops by index, process
// and time; the resource checker by seq). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/timeline.h"

namespace fencecheck::report {

// One violation of results.json and the checker that found it.
struct ViolationRef {
  std::string checker;
  std::size_t number = 0;  // its place in the checker's list, from 0
  const nlohmann::json* violation = nullptr;
};

// Its "message" (a linearizable violation: its "reason"), else its JSON, cut short.
std::string violation_message(const nlohmann::json& violation);

// Every violation listed in `results` ("checkers".<name>."violations"), in checker order.
std::vector<ViolationRef> violations_of(const nlohmann::json& results);

struct Focus {
  Nanos from = 0, to = 0;                 // the time window the violation spans
  std::vector<std::int64_t> processes;    // processes it names
  std::vector<std::uint64_t> indices;     // history lines it names
  std::vector<std::uint64_t> context;     // lines named as background (a linearizable prefix)
  std::vector<std::uint64_t> seqs;        // resource log entries it names
};

// Finds the focus of violations against one timeline (built once: seq -> entry, and the
// hold each (client node, token) was granted). A resource entry a violation names brings in
// the hold under which its client sent it, so a stale write is shown with the lease its
// sender believed it still had.
class FocusFinder {
 public:
  explicit FocusFinder(const Timeline& t);
  // A violation naming no time, index or seq spans the whole history.
  Focus focus_of(const nlohmann::json& violation) const;

 private:
  void walk(const nlohmann::json& j, bool context, Focus& f, std::vector<Nanos>& times) const;
  const Timeline& t_;
  void add_seq(std::uint64_t seq, Focus& f, std::vector<Nanos>& times) const;
  std::vector<std::pair<std::uint64_t, std::size_t>> seq_entry_;  // (seq, index in t.resource), sorted
  std::map<std::pair<std::string, Token>, std::size_t> hold_of_;  // (node, token) -> index in t.holds
};

// The whole data document.
nlohmann::json report_data(const Timeline& t, const std::vector<ViolationRef>& violations);

}  // namespace fencecheck::report
