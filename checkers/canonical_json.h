// The one canonical text of a JSON value: two values that JSON considers equal print the
// same, so that checkers can compare values as strings (a write of {"b":1,"a":2} read back
// as {"a":2,"b":1} is the same value, not a lost update).
//
// The form: minified (no whitespace); object keys sorted bytewise (duplicates keep their
// order); numbers normalised — an integer prints as one, a double that is integral and
// within the 64-bit integer range ([-2^63, 2^64)) prints as that integer (1.0 → 1,
// -0.0 → 0, 1e2 → 100), any other double in its shortest round-trip form (0.1, 1e+300);
// strings escape only `"`, `\` and control characters (\b \f \n \r \t, else \u00XX in
// lowercase hex), everything else — "/" and non-ASCII UTF-8 — is written as itself, so
// "\u00e9" and "é" print alike. This is what nlohmann::json::dump() prints for the same
// value, except for numbers and key order.
//
// Thread-safe: canonical_json_text keeps one parser per thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace fencecheck {

// The canonical text of an element.
std::string canonical_json(simdjson::dom::element e);
// Appends the canonical text of `e` to `out`: for hot loops that reuse one buffer.
void append_canonical_json(simdjson::dom::element e, std::string& out);
// The canonical text of JSON `text`; nullopt when `text` is not one JSON value.
std::optional<std::string> canonical_json_text(std::string_view text);

}  // namespace fencecheck
