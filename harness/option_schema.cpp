#include "harness/option_schema.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "platform/errors.h"

namespace fencecheck {
std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

namespace {

std::string number_text(double d) {  // the shortest text that reads back as exactly d
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, end);
}

std::int64_t whole_number(const OptionSpec& spec, const std::string& text, std::size_t& used) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data()) {
    throw std::invalid_argument("--" + spec.name + ": \"" + text + "\" is not a whole number");
  }
  used = static_cast<std::size_t>(end - text.data());
  return v;
}

std::int64_t bytes(const OptionSpec& spec, const std::string& text) {
  const std::string not_a_size = "--" + spec.name + ": \"" + text + "\" is not a size (a number, then K, M, G or T)";
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) throw std::invalid_argument(not_a_size);
  std::size_t used = 0;
  std::int64_t v = whole_number(spec, text, used);
  std::string suffix = text.substr(used);
  for (char& ch : suffix) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (suffix.size() > 1 && suffix.back() == 'B') suffix.pop_back();
  if (suffix.size() > 1 && suffix.back() == 'I') suffix.pop_back();
  const std::string scales = "KMGT";
  if (suffix.empty() || suffix == "B") return v;
  auto at = scales.find(suffix);
  if (suffix.size() != 1 || at == std::string::npos) {
    throw std::invalid_argument(not_a_size);
  }
  for (std::size_t i = 0; i <= at; ++i) {
    if (v > std::numeric_limits<std::int64_t>::max() / 1024 || v < std::numeric_limits<std::int64_t>::min() / 1024) {
      throw std::invalid_argument("--" + spec.name + ": \"" + text + "\" is too large");
    }
    v *= 1024;
  }
  return v;
}

// "must be between 1 and 64", "must be positive", … for a number's declared range.
std::string range_words(const OptionSpec& s) {
  const bool has_max = std::isfinite(s.max);
  if (std::isfinite(s.min) && has_max) return "must be between " + number_text(s.min) + " and " + number_text(s.max);
  if (has_max) return "must be at most " + number_text(s.max);
  if (s.min == 0 && s.min_exclusive) return "must be positive";
  if (s.min == 1 && s.type != OptionType::kNumber) return "must be positive";
  if (s.min == 0) return "must not be negative";
  return std::string("must be ") + (s.min_exclusive ? "more than " : "at least ") + number_text(s.min);
}

std::string group_of(OptionReader r) {
  switch (r) {
    case OptionReader::kRun: return "Test options";
    case OptionReader::kWorkload: return "Workload options";
    case OptionReader::kNemesis: return "Fault options";
    case OptionReader::kChecker: return "Checker options";
  }
  return "Options";
}

std::string help_of(const OptionSpec& s) {
  std::vector<std::string> notes;
  if (!s.unit.empty()) notes.push_back(s.unit);
  if (!s.allowed.empty()) notes.push_back(join(s.allowed, ", "));
  if (!s.derived.empty()) {
    notes.push_back("default: " + s.derived);
  } else if (!s.default_value.is_null() && s.default_value != "") {
    notes.push_back("default: " + option_text(s.default_value));
  }
  return s.help + (notes.empty() ? "" : " [" + join(notes, "; ") + "]");
}

}  // namespace

std::string option_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return number_text(value.get<double>());
  return value.dump();
}

OptionSchema::OptionSchema(std::vector<OptionSpec> specs) {
  for (auto& s : specs) add(std::move(s));
}

void OptionSchema::add(OptionSpec spec) {
  if (find(spec.name) != nullptr) throw std::logic_error("option --" + spec.name + " is declared twice");
  specs_.push_back(std::move(spec));
}

void OptionSchema::add(const std::vector<OptionSpec>& specs) {
  for (const auto& s : specs) add(s);
}

const OptionSpec* OptionSchema::find(const std::string& name) const {
  for (const auto& s : specs_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

OptionValues OptionSchema::defaults() const { return defaults_of(specs_); }

void OptionSchema::derive(OptionValues& values) const {
  for (const auto& s : specs_) {
    if (s.derive && !values.has(s.name)) values.set(s.name, s.derive(values));
  }
}

nlohmann::json OptionSchema::parse(const OptionSpec& spec, const std::string& text) {
  switch (spec.type) {
    case OptionType::kInteger: {
      std::size_t used = 0;
      std::int64_t v = whole_number(spec, text, used);
      if (used != text.size()) throw std::invalid_argument("--" + spec.name + ": \"" + text + "\" is not a whole number");
      return v;
    }
    case OptionType::kNumber: {
      double v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
        throw std::invalid_argument("--" + spec.name + ": \"" + text + "\" is not a finite number");
      }
      return v;
    }
    case OptionType::kBytes: return bytes(spec, text);
    case OptionType::kText: break;
  }
  return text;
}

std::optional<std::string> OptionSchema::problem(const OptionValues& values) const {
  for (const auto& [name, value] : values.all()) {
    const OptionSpec* s = find(name);
    if (s == nullptr) return "unknown option --" + name;
    const std::string flag = "--" + name;
    if (s->type == OptionType::kText) {
      if (!value.is_string()) return flag + " must be a word, not " + value.dump();
      const std::string v = value.get<std::string>();
      if (v.empty() || s->allowed.empty()) continue;
      bool ok = false;
      for (const auto& a : s->allowed) ok = ok || a == v;
      if (!ok) return flag + " must be one of " + join(s->allowed, ", ") + ", not \"" + v + "\"";
      continue;
    }
    if (!value.is_number() || (s->type != OptionType::kNumber && !value.is_number_integer())) {
      return flag + " must be a " + (s->type == OptionType::kNumber ? "number" : "whole number") + ", not " +
             value.dump();
    }
    const double v = value.get<double>();
    const bool below = s->min_exclusive ? !(v > s->min) : !(v >= s->min);
    if (!std::isfinite(v) || below || !(v <= s->max)) {
      return flag + " " + range_words(*s) + " (got " + option_text(value) + (s->unit.empty() ? "" : " " + s->unit) +
             ")";
    }
  }
  return std::nullopt;
}

void OptionSchema::write_config(const OptionValues& values, nlohmann::json& config) const {
  for (const auto& s : specs_) {
    if (values.has(s.name)) config[s.config_field()] = values.at(s.name);
  }
}

OptionValues OptionSchema::read_config(const nlohmann::json& config, const std::string& file) const {
  OptionValues values = defaults();
  if (!config.is_object()) throw InputError(file, 0, "", "is not a JSON object");
  for (const auto& s : specs_) {
    const std::string field = s.config_field();
    if (!config.contains(field)) continue;  // recorded before the option existed
    const nlohmann::json& v = config.at(field);
    const bool fits = s.type == OptionType::kText     ? v.is_string()
                      : s.type == OptionType::kNumber ? v.is_number()
                                                      : v.is_number_integer();
    if (!fits) throw InputError(file, 0, field, "has the wrong type: " + v.dump());
    values.set(s.name, v);
  }
  return values;
}

std::vector<std::string> OptionSchema::args(const OptionValues& values) const {
  std::vector<std::string> out;
  for (const auto& s : specs_) {
    if (!values.has(s.name)) continue;
    std::string text = option_text(values.at(s.name));
    if (s.type == OptionType::kText && text.empty()) continue;
    out.insert(out.end(), {"--" + s.name, text});
  }
  return out;
}

void OptionSchema::add_cli(CLI::App& cmd, std::map<std::string, std::string>& raw, bool for_check) const {
  for (const auto& s : specs_) {
    if (for_check && s.reader != OptionReader::kChecker) continue;
    std::string names = "--" + s.name;
    if (for_check && !s.check_alias.empty()) names = "--" + s.check_alias + "," + names;
    const char* type = s.type == OptionType::kText    ? "TEXT"
                       : s.type == OptionType::kBytes ? "SIZE"
                       : s.type == OptionType::kInteger ? "INT"
                                                        : "NUMBER";
    cmd.add_option_function<std::string>(names, [&raw, name = s.name](const std::string& v) { raw[name] = v; },
                                         help_of(s))
        ->type_name(type)
        ->group(group_of(s.reader));
  }
}

void OptionSchema::apply_cli(const std::map<std::string, std::string>& raw, OptionValues& values) const {
  for (const auto& [name, text] : raw) {
    const OptionSpec* s = find(name);
    if (s == nullptr) throw std::invalid_argument("unknown option --" + name);
    values.set(name, parse(*s, text));
  }
}

}  // namespace fencecheck
