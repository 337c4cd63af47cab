#include "platform/yaml_text.h"

#include <algorithm>
#include <cctype>

#include "platform/json_text.h"

namespace fencecheck {
namespace {

// A name that YAML 1.1 (go-yaml, which kubectl uses) reads as a boolean or null is quoted.
bool is_plain_key(const std::string& key) {
  static const char* const kWords[] = {"y", "n", "yes", "no", "true", "false", "on", "off", "null"};
  std::string lower;
  for (unsigned char c : key) lower += static_cast<char>(std::tolower(c));
  for (const char* w : kWords) {
    if (lower == w) return false;
  }
  return !key.empty() && std::isalpha(static_cast<unsigned char>(key[0])) &&
         std::all_of(key.begin(), key.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/';
         });
}

// A JSON text with every non-ASCII character and DEL escaped: YAML readers refuse raw C1
// controls and U+FEFF, and YAML 1.1 ones (go-yaml, kubectl) read U+0085, U+2028 and U+2029
// as line breaks.
std::string scalar(const nlohmann::ordered_json& v) {
  std::string text = v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::string out;
  for (char c : text) out += c == '\x7f' ? std::string("\\u007f") : std::string(1, c);
  return out;
}

// Whether s (valid UTF-8) holds a character a literal block cannot carry as it is: a C1
// control (U+0080–U+009F, U+0085 among them), U+2028, U+2029 or U+FEFF.
bool has_unsafe_character(const std::string& s) {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    if (b(i) == 0xC2 && b(i + 1) >= 0x80 && b(i + 1) <= 0x9F) return true;
    if (i + 2 < s.size() && b(i) == 0xE2 && b(i + 1) == 0x80 && (b(i + 2) == 0xA8 || b(i + 2) == 0xA9)) return true;
    if (i + 2 < s.size() && b(i) == 0xEF && b(i + 1) == 0xBB && b(i + 2) == 0xBF) return true;
  }
  return false;
}

// A literal block keeps every character of a string that ends in a newline and whose
// lines are non-empty, printable ASCII or UTF-8, and start with no space.
bool fits_literal_block(const std::string& s) {
  if (s.size() < 2 || s.back() != '\n') return false;
  bool line_start = true;
  for (unsigned char c : s) {
    if (c == '\n') {
      if (line_start) return false;  // an empty line
      line_start = true;
      continue;
    }
    if (c < 0x20 || c == 0x7f || (line_start && c == ' ')) return false;
    line_start = false;
  }
  return valid_utf8(s) == s && !has_unsafe_character(s);
}


void write_value(const nlohmann::ordered_json& v, int indent, std::string& out);

// `prefix` is what precedes the value on its line ("key:" or "-").
void write_after(const std::string& prefix, const nlohmann::ordered_json& v, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.is_string() && fits_literal_block(v.get<std::string>())) {
    out += pad + prefix + " |\n";
    const std::string text = v.get<std::string>();
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      out += pad + "  " + text.substr(start, end - start) + "\n";
      start = end + 1;
    }
  } else if (prefix == "-" && v.is_object() && !v.empty()) {
    // "- first: …" with the other keys under it: the object at indent + 2, its first
    // line's indent replaced by the dash.
    std::string item;
    write_value(v, indent + 2, item);
    out += pad + "- " + item.substr(indent + 2);
  } else if ((v.is_object() || v.is_array()) && !v.empty()) {
    out += pad + prefix + "\n";
    write_value(v, indent + 2, out);
  } else {
    out += pad + prefix + " " + (v.is_object() ? "{}" : v.is_array() ? "[]" : scalar(v)) + "\n";
  }
}

void write_value(const nlohmann::ordered_json& v, int indent, std::string& out) {
  if (v.is_object()) {
    for (const auto& [key, item] : v.items()) {
      write_after((is_plain_key(key) ? key : scalar(key)) + ":", item, indent, out);
    }
  } else if (v.is_array()) {
    for (const auto& item : v) write_after("-", item, indent, out);
  } else {
    out += std::string(indent, ' ') + scalar(v) + "\n";
  }
}

}  // namespace

std::string yaml_document(const nlohmann::ordered_json& value) {
  std::string out;
  write_value(value, 0, out);
  return out;
}

}  // namespace fencecheck
