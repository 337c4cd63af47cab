// JSON text of documents that hold strings from outside fencecheck: a server's error
// message, a log tail, a process's output. nlohmann::json::dump throws on invalid UTF-8,
// and one stray byte from a server must never abort a run or lose a history line, so
// these replace every invalid sequence with U+FFFD instead. Pure functions, thread-safe,
// never throw on content (only std::bad_alloc).
//
// Use them wherever such a string is written out (history.jsonl, resource.jsonl,
// results.json, suite.json). Not for documents that must round-trip exactly, such as a
// run-state file whose paths `fencecheck clean` removes: there a replaced byte would name
// another path, so a plain dump()'s exception is the right answer.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fencecheck {

// j.dump(indent), with invalid UTF-8 in its strings replaced by U+FFFD.
template <typename Json>
std::string dump_json(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// s with every invalid UTF-8 sequence replaced by U+FFFD: safe to put into any JSON
// document, e.g. a log tail cut at an arbitrary byte.
inline std::string valid_utf8(std::string_view s) {
  // The encoder is the one place that knows nlohmann's notion of valid UTF-8; the string
  // literal it writes parses back to the repaired text.
  return nlohmann::json::parse(dump_json(nlohmann::json(std::string(s)))).get<std::string>();
}

}  // namespace fencecheck
