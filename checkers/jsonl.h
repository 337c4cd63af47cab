// Shared plumbing of the JSONL readers (history.jsonl, resource.jsonl): a line reader that
// knows whether the last line was cut short, and typed field access on a simdjson object
// that throws InputError naming file, line and field. Internal to checkers/.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "checkers/event_source.h"
#include "checkers/input_file.h"

namespace fencecheck::jsonl {

// Reads a file line by line with one reused buffer. Throws InputError if it cannot be opened
// or is not a regular file (input_file.h).
class LineReader {
 public:
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its newline; false at end of file.
  bool next(std::string_view& line);
  std::size_t line_number() const { return line_number_; }
  // True when the line last returned had no newline: the writer may have been killed.
  bool last_line_unterminated() const { return unterminated_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  InputFile file_;
  char* buf_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t line_number_ = 0;
  bool unterminated_ = false;
};

// Parses one line into an object. Returns nullopt (and fills `error`) on malformed JSON.
class ObjectParser {
 public:
  std::optional<simdjson::dom::object> parse(std::string_view line, std::string& error);

 private:
  simdjson::dom::parser parser_;
};

// Typed access to one line's top-level fields: each throws InputError(file, line, field, …)
// when missing or mistyped. The object is walked once; lookups then scan a small array,
// which is far cheaper than simdjson's at_key walking the tape for every field.
class Fields {
 public:
  Fields(const std::string& file, std::size_t line, simdjson::dom::object obj);

  const std::string& file;
  const std::size_t line;

  [[noreturn]] void fail(std::string_view field, const std::string& what) const;
  std::optional<simdjson::dom::element> find(std::string_view field) const;
  simdjson::dom::element require(std::string_view field) const;
  std::int64_t require_int(std::string_view field, std::int64_t min) const;
  std::string_view require_string(std::string_view field) const;
  bool require_bool(std::string_view field) const;
  // An optional string field: empty when absent or null. Valid until the next line is parsed.
  std::string_view optional_string(std::string_view field) const;
  // {"token": N|null} inside an object value; `where` names the field in errors.
  std::optional<std::int64_t> token_of(simdjson::dom::element value, std::string_view where) const;

 private:
  static constexpr std::size_t kMaxFields = 16;  // more than any line of the contract has
  std::size_t count_ = 0;
  std::string_view keys_[kMaxFields];
  simdjson::dom::element values_[kMaxFields];
};

const char* type_name(simdjson::dom::element_type t);

}  // namespace fencecheck::jsonl
