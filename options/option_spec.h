// One option of `fencecheck run` (and `check`), declared once where the subsystem that
// reads it lives: a fault's options with its registry entry (nemesis/registry.cpp), the
// checkers' with the checkers (checkers/registry.cpp), the run's and the workload's in
// harness/run/run_options.cpp. Everything else — the CLI flag and its help, validation
// with a message naming the flag and the allowed range, the config.json field, repro.sh's
// arguments, reading config.json back for --replay, checking the suite's argument lists —
// follows from the declaration (harness/option_schema.h).
//
// OptionValues is the options map a run carries and hands, whole, to the nemesis (Jepsen
// passes one opts map): option name → JSON value. Header-only, plain data: copyable,
// thread-compatible. Getters throw std::out_of_range naming the option when it has no
// value, and nlohmann::json::type_error when it has another type than asked for.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

enum class OptionType {
  kInteger,  // a whole number (JSON integer)
  kNumber,   // a finite decimal number (JSON number)
  kText,     // a word; one of `allowed` when that is not empty; "" means unset
  kBytes,    // a size: a whole number of bytes, typed with an optional K, M, G or T (×1024)
};

// Who reads the option: the help groups options by it.
enum class OptionReader { kRun, kWorkload, kNemesis, kChecker };

class OptionValues;

struct OptionSpec {
  std::string name;  // "pause-ms": the flag is --pause-ms
  OptionType type = OptionType::kInteger;
  OptionReader reader = OptionReader::kRun;
  nlohmann::json default_value;  // null: derived (see `derive`) or none
  // A default that follows from other options: computed by resolve() from the values it
  // has (other options' derived defaults come first when declared earlier); `derived` says
  // how, for the help.
  std::function<nlohmann::json(const OptionValues&)> derive;
  std::string derived;
  double min = -std::numeric_limits<double>::infinity();  // inclusive, unless min_exclusive
  double max = std::numeric_limits<double>::infinity();   // inclusive
  bool min_exclusive = false;
  std::vector<std::string> allowed;  // kText: the words it may be ("" is always allowed: unset)
  std::string unit;                  // "ms", "s", "bytes"; "" for counts and words
  std::string help;                  // one line
  // The config.json field; empty: the name with '_' for '-', plus "_<unit>" unless the
  // name already ends with it ("nemesis-interval" → "nemesis_interval_ms").
  std::string field;
  // `fencecheck check`'s older spelling of the same option ("time-limit" for
  // "linear-time-limit"), accepted there beside the name.
  std::string check_alias;

  std::string config_field() const {
    if (!field.empty()) return field;
    std::string f = name;
    for (char& ch : f) {
      if (ch == '-') ch = '_';
    }
    const std::string suffix = "_" + unit;
    if (!unit.empty() && (f.size() < suffix.size() || f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)) {
      f += suffix;
    }
    return f;
  }
};

// The fields every declaration sets; a range, allowed words or a derived default are set
// on the result.
inline OptionSpec declare_option(std::string name, OptionReader reader, OptionType type,
                                 nlohmann::json default_value, std::string unit, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.reader = reader;
  s.type = type;
  s.default_value = std::move(default_value);
  s.unit = std::move(unit);
  s.help = std::move(help);
  return s;
}

class OptionValues {
 public:
  void set(const std::string& name, nlohmann::json value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  const nlohmann::json& at(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw std::out_of_range("option --" + name + " has no value");
    return it->second;
  }
  std::int64_t integer(const std::string& name) const { return at(name).get<std::int64_t>(); }
  double number(const std::string& name) const { return at(name).get<double>(); }
  std::string text(const std::string& name) const { return at(name).get<std::string>(); }
  std::chrono::milliseconds ms(const std::string& name) const { return std::chrono::milliseconds(integer(name)); }
  const std::map<std::string, nlohmann::json>& all() const { return values_; }
  bool operator==(const OptionValues& o) const { return values_ == o.values_; }

 private:
  std::map<std::string, nlohmann::json> values_;
};

// The declared defaults of `specs` (a derived default has none until derived).
inline OptionValues defaults_of(const std::vector<OptionSpec>& specs) {
  OptionValues v;
  for (const OptionSpec& s : specs) {
    if (!s.default_value.is_null()) v.set(s.name, s.default_value);
  }
  return v;
}

}  // namespace fencecheck
