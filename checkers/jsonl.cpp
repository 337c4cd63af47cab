#include "checkers/jsonl.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace fencecheck::jsonl {

LineReader::LineReader(const std::string& path) : path_(path), file_(open_input_file(path)) {
  static constexpr std::size_t kBuffer = 1 << 20;
  std::setvbuf(file_.get(), nullptr, _IOFBF, kBuffer);
}

LineReader::~LineReader() { std::free(buf_); }

bool LineReader::next(std::string_view& line) {
  ssize_t n = ::getline(&buf_, &cap_, file_.get());
  if (n < 0) {
    if (std::ferror(file_.get())) {
      throw InputError(path_, line_number_ + 1, "", std::string("read error: ") + std::strerror(errno));
    }
    return false;
  }
  ++line_number_;
  unterminated_ = n == 0 || buf_[n - 1] != '\n';
  if (!unterminated_) --n;
  if (n > 0 && buf_[n - 1] == '\r') --n;
  line = std::string_view(buf_, static_cast<std::size_t>(n));
  return true;
}

std::optional<simdjson::dom::object> ObjectParser::parse(std::string_view line,
                                                         std::string& error) {
  simdjson::dom::element doc;
  if (auto err = parser_.parse(line.data(), line.size(), true).get(doc); err) {
    error = std::string("malformed JSON: ") + simdjson::error_message(err);
    return std::nullopt;
  }
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) {
    error = std::string("each line must be a JSON object, found ") + type_name(doc.type());
    return std::nullopt;
  }
  return obj;
}

const char* type_name(simdjson::dom::element_type t) {
  using T = simdjson::dom::element_type;
  switch (t) {
    case T::ARRAY: return "an array";
    case T::OBJECT: return "an object";
    case T::INT64:
    case T::UINT64:
    case T::DOUBLE: return "a number";
    case T::STRING: return "a string";
    case T::BOOL: return "a boolean";
    case T::NULL_VALUE: return "null";
  }
  return "?";
}

void Fields::fail(std::string_view field, const std::string& what) const {
  throw InputError(file, line, std::string(field), what);
}

Fields::Fields(const std::string& file_name, std::size_t line_number, simdjson::dom::object obj)
    : file(file_name), line(line_number) {
  for (simdjson::dom::key_value_pair field : obj) {
    for (std::size_t i = 0; i < count_; ++i) {
      if (keys_[i] == field.key) fail(field.key, "appears twice on the line");
    }
    if (count_ == kMaxFields) fail(field.key, "too many fields on one line (at most 16)");
    keys_[count_] = field.key;
    values_[count_++] = field.value;
  }
}

std::optional<simdjson::dom::element> Fields::find(std::string_view field) const {
  for (std::size_t i = 0; i < count_; ++i) {
    if (keys_[i] == field) return values_[i];
  }
  return std::nullopt;
}

simdjson::dom::element Fields::require(std::string_view field) const {
  auto e = find(field);
  if (!e) fail(field, "missing");
  return *e;
}

std::int64_t Fields::require_int(std::string_view field, std::int64_t min) const {
  auto e = require(field);
  std::int64_t v;
  if (e.get_int64().get(v)) {
    fail(field, std::string("must be an integer, found ") + type_name(e.type()) +
                    (e.is_number() ? " out of range or with a fraction" : ""));
  }
  if (v < min) fail(field, "must be at least " + std::to_string(min) + ", found " + std::to_string(v));
  return v;
}

std::string_view Fields::require_string(std::string_view field) const {
  auto e = require(field);
  std::string_view s;
  if (e.get_string().get(s)) fail(field, std::string("must be a string, found ") + type_name(e.type()));
  return s;
}

bool Fields::require_bool(std::string_view field) const {
  auto e = require(field);
  bool b;
  if (e.get_bool().get(b)) fail(field, std::string("must be a boolean, found ") + type_name(e.type()));
  return b;
}

std::string_view Fields::optional_string(std::string_view field) const {
  auto e = find(field);
  if (!e || e->is_null()) return {};
  std::string_view s;
  if (e->get_string().get(s)) fail(field, std::string("must be a string, found ") + type_name(e->type()));
  return s;  // points into the parser's buffer, which outlives this line's use
}

std::optional<std::int64_t> Fields::token_of(simdjson::dom::element value,
                                             std::string_view where) const {
  std::string field = std::string(where) + ".token";
  simdjson::dom::object o;
  if (value.get_object().get(o)) {
    fail(where, std::string("must be an object with a \"token\", found ") + type_name(value.type()));
  }
  simdjson::dom::element t;
  if (o.at_key("token").get(t)) fail(field, "missing");
  if (t.is_null()) return std::nullopt;
  std::int64_t v;
  if (t.get_int64().get(v)) fail(field, std::string("must be an integer or null, found ") + type_name(t.type()));
  return v;
}

}  // namespace fencecheck::jsonl
