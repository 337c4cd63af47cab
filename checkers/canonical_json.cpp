#include "checkers/canonical_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

namespace fencecheck {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

template <typename T>
void append_number(T v, std::string& out) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// 2^63 and 2^64 are exact doubles, so these bounds compare without rounding.
constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;

void append_double(double d, std::string& out) {
  if (d == std::trunc(d)) {  // JSON has no NaN or infinity, so d is finite
    if (d >= -kTwo63 && d < kTwo63) return append_number(static_cast<std::int64_t>(d), out);
    if (d >= 0 && d < kTwo64) return append_number(static_cast<std::uint64_t>(d), out);
  }
  append_number(d, out);  // shortest text that reads back as the same double
}

void append_string(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
  }
  out.append(s.data() + start, s.size() - start);
  out.push_back('"');
}

struct Field {
  std::string_view key;
  element value;
};

void append_field(const Field& f, bool first, std::string& out) {
  if (!first) out.push_back(',');
  append_string(f.key, out);
  out.push_back(':');
  append_canonical_json(f.value, out);
}

void append_object(simdjson::dom::object o, std::string& out) {
  // Values written by our own tools already have sorted keys: check first, and sort only
  // when needed, so the common case allocates nothing.
  bool sorted = true;
  std::string_view previous;
  bool first = true;
  for (simdjson::dom::key_value_pair kv : o) {
    if (!first && kv.key < previous) {
      sorted = false;
      break;
    }
    previous = kv.key;
    first = false;
  }
  out.push_back('{');
  if (sorted) {
    first = true;
    for (simdjson::dom::key_value_pair kv : o) {
      append_field(Field{kv.key, kv.value}, first, out);
      first = false;
    }
  } else {
    std::vector<Field> fields;
    for (simdjson::dom::key_value_pair kv : o) fields.push_back(Field{kv.key, kv.value});
    std::stable_sort(fields.begin(), fields.end(),
                     [](const Field& a, const Field& b) { return a.key < b.key; });
    for (std::size_t i = 0; i < fields.size(); ++i) append_field(fields[i], i == 0, out);
  }
  out.push_back('}');
}

}  // namespace

void append_canonical_json(element e, std::string& out) {
  switch (e.type()) {
    case element_type::ARRAY: {
      simdjson::dom::array items = e.get_array().value_unsafe();
      out.push_back('[');
      bool first = true;
      for (element item : items) {
        if (!first) out.push_back(',');
        append_canonical_json(item, out);
        first = false;
      }
      out.push_back(']');
      return;
    }
    case element_type::OBJECT: return append_object(e.get_object().value_unsafe(), out);
    case element_type::INT64: return append_number(e.get_int64().value_unsafe(), out);
    case element_type::UINT64: return append_number(e.get_uint64().value_unsafe(), out);
    case element_type::DOUBLE: return append_double(e.get_double().value_unsafe(), out);
    case element_type::STRING: return append_string(e.get_string().value_unsafe(), out);
    case element_type::BOOL: out += e.get_bool().value_unsafe() ? "true" : "false"; return;
    case element_type::NULL_VALUE: out += "null"; return;
  }
}

std::string canonical_json(element e) {
  std::string out;
  append_canonical_json(e, out);
  return out;
}

std::optional<std::string> canonical_json_text(std::string_view text) {
  // One parser per thread saves an allocation per call; a long text gets a parser of its
  // own so that the thread does not keep that much memory for the rest of its life.
  constexpr std::size_t kReusedParserLimit = std::size_t{1} << 20;
  thread_local simdjson::dom::parser reused;
  simdjson::dom::parser own;
  simdjson::dom::parser& parser = text.size() <= kReusedParserLimit ? reused : own;
  element e;
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(e)) return std::nullopt;
  return canonical_json(e);
}

}  // namespace fencecheck
