// OptionSchema: a set of option declarations (options/option_spec.h) and everything that
// follows from them — CLI flags with their help, parsing a typed value, range checks with
// one message naming the flag and the allowed range, config.json fields in both
// directions, and the arguments that give the same values again (repro.sh).
//
// Errors: parse() throws std::invalid_argument ("--concurrency: \"abc\" is not a whole
// number"); problem() returns the message ("--keys must be between 1 and 1000 (got 0)");
// read_config() throws InputError naming the file and the field. Nothing blocks. A schema
// is plain data: build it, then share it read-only between threads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "options/option_spec.h"

namespace fencecheck {

class OptionSchema {
 public:
  OptionSchema() = default;
  explicit OptionSchema(std::vector<OptionSpec> specs);
  // Throws std::logic_error when an option of that name is declared already.
  void add(OptionSpec spec);
  void add(const std::vector<OptionSpec>& specs);
  const std::vector<OptionSpec>& specs() const { return specs_; }
  const OptionSpec* find(const std::string& name) const;  // nullptr when undeclared

  // Every declared default (derived ones are left for derive()).
  OptionValues defaults() const;
  // Fills in each derived option that has no value yet, in declaration order.
  void derive(OptionValues& values) const;
  // The value `text` stands for, typed (no range check). Throws std::invalid_argument.
  static nlohmann::json parse(const OptionSpec& spec, const std::string& text);
  // The first value out of its declared range or type, or an unknown option, as a message.
  std::optional<std::string> problem(const OptionValues& values) const;
  // config.json fields of every option with a value.
  void write_config(const OptionValues& values, nlohmann::json& config) const;
  // The values of a stored config.json: a field that is absent (a run recorded before the
  // option existed) gets the option's default. Throws InputError(file, 0, field, …) for a
  // field of the wrong type.
  OptionValues read_config(const nlohmann::json& config, const std::string& file) const;
  // "--name value" for every option with a value; an unset word ("") is left out.
  std::vector<std::string> args(const OptionValues& values) const;

  // Declares every option as a CLI flag of cmd whose text lands in raw[name]; the help
  // says the unit, the allowed values and the default. `for_check` uses check_alias as a
  // second name and declares only the checker options.
  void add_cli(CLI::App& cmd, std::map<std::string, std::string>& raw, bool for_check = false) const;
  // Parses what add_cli() collected into values. Throws std::invalid_argument.
  void apply_cli(const std::map<std::string, std::string>& raw, OptionValues& values) const;

 private:
  std::vector<OptionSpec> specs_;
};

// The text a value is given as on a command line ("2.5", "3000", "fenced").
std::string option_text(const nlohmann::json& value);
// The words with sep between them: lists in messages and on command lines ("a, b", "a,b").
std::string join(const std::vector<std::string>& words, const char* sep);

}  // namespace fencecheck
