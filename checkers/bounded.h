// Bounded renderings of history values for messages and violations: a value in a history
// can be a list of millions of items, and printing it whole once made a 63 MB summary line.
// Every value a checker puts into a sentence or a violation goes through one of these.
//
// Values up to `max_chars` characters of JSON text pass unchanged. Longer ones are
// abbreviated: a long array shows its first and last items and how many lie between
// ([0, 1, 2, … 7999996 more …, 7999999] (8000000 items)), an object its first keys, a long
// string its start and its length, and containers nested deeper than a few levels show
// only their size. Limits tighten until the result fits in about max_chars; text that is
// not JSON is cut the same way strings are.
//
// Thread-safe; the cost of an abbreviation is one parse of the text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fencecheck {

inline constexpr std::size_t kMaxValueChars = 200;

// `json_text` itself when short enough, else its abbreviation (at most about max_chars).
std::string bounded_text(std::string_view json_text, std::size_t max_chars = kMaxValueChars);

// For violations: the value itself when its text is short enough; otherwise
// {"abbreviated": bounded_text(json_text), "chars": <length of the full text>}, so that a
// reader never mistakes the abbreviation for the value. Short text that is not JSON
// becomes a JSON string.
nlohmann::json bounded_json(std::string_view json_text, std::size_t max_chars = kMaxValueChars);

}  // namespace fencecheck
