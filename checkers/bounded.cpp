#include "checkers/bounded.h"

#include <array>

#include <simdjson.h>

#include "checkers/canonical_json.h"

namespace fencecheck {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// How much of a value one rendering shows; renderings go from generous to terse.
struct Limits {
  std::size_t items;  // leading items of an array or keys of an object
  std::size_t chars;  // leading characters of a string
  std::size_t depth;  // containers below this depth show only their size
};
constexpr std::array<Limits, 4> kLevels = {{{8, 64, 4}, {3, 24, 3}, {2, 12, 2}, {1, 8, 1}}};

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// The first `chars` characters of `s`, never splitting a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t chars) {
  std::size_t i = 0;
  for (std::size_t seen = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && seen++ == chars) break;
  }
  return s.substr(0, i);
}

std::string quoted(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string cut_string(std::string_view s, std::size_t chars) {
  std::size_t length = utf8_length(s);
  if (length <= chars) return quoted(s);
  std::string q = quoted(utf8_prefix(s, chars));
  q.insert(q.size() - 1, "…");
  return q + " (" + std::to_string(length) + " chars)";
}

// simdjson's size() saturates at 2^24 - 1; count past that by walking.
template <typename Container>
std::size_t count(Container c) {
  std::size_t n = c.size();
  if (n < 0xFFFFFF) return n;
  n = 0;
  for (auto it = c.begin(); it != c.end(); ++it) ++n;
  return n;
}

// "1 item", "3 items".
std::string counted(std::size_t n, const char* unit) {
  return std::to_string(n) + " " + unit + (n == 1 ? "" : "s");
}

// An empty container, or one at the depth limit, as its size alone; false when its items
// are to be shown.
bool render_as_size(std::size_t n, std::size_t depth, const Limits& lim, const char* brackets,
                    const char* unit, std::string& out) {
  if (n > 0 && depth < lim.depth) return false;
  out += brackets[0];
  if (n > 0) out += "… " + counted(n, unit);
  out += brackets[1];
  return true;
}

void render(element e, const Limits& lim, std::size_t depth, std::string& out);

void render_array(simdjson::dom::array a, const Limits& lim, std::size_t depth, std::string& out) {
  std::size_t n = count(a);
  if (render_as_size(n, depth, lim, "[]", "item", out)) return;
  const bool cut = n > lim.items + 2;  // hiding a single item saves nothing
  std::size_t i = 0;
  element last;
  out += "[";
  for (element item : a) {
    if (!cut || i < lim.items) {
      if (i > 0) out += ", ";
      render(item, lim, depth + 1, out);
    }
    last = item;
    ++i;
  }
  if (cut) {
    out += ", … " + std::to_string(n - lim.items - 1) + " more …, ";
    render(last, lim, depth + 1, out);
  }
  out += "]";
}

void render_object(simdjson::dom::object o, const Limits& lim, std::size_t depth, std::string& out) {
  std::size_t n = count(o);
  if (render_as_size(n, depth, lim, "{}", "key", out)) return;
  const bool cut = n > lim.items + 1;
  std::size_t i = 0;
  out += "{";
  for (simdjson::dom::key_value_pair kv : o) {
    if (cut && i == lim.items) break;
    if (i++ > 0) out += ", ";
    out += cut_string(kv.key, lim.chars) + ": ";
    render(kv.value, lim, depth + 1, out);
  }
  if (cut) out += ", … " + std::to_string(n - lim.items) + " more keys";
  out += "}";
}

void render(element e, const Limits& lim, std::size_t depth, std::string& out) {
  switch (e.type()) {
    case element_type::ARRAY: return render_array(e.get_array().value_unsafe(), lim, depth, out);
    case element_type::OBJECT: return render_object(e.get_object().value_unsafe(), lim, depth, out);
    case element_type::STRING: out += cut_string(e.get_string().value_unsafe(), lim.chars); return;
    default: append_canonical_json(e, out); return;
  }
}

// "… (N items)" after an abbreviated top-level container, so its size is never lost.
std::string size_suffix(element e) {
  if (e.is_array()) return " (" + counted(count(e.get_array().value_unsafe()), "item") + ")";
  if (e.is_object()) return " (" + counted(count(e.get_object().value_unsafe()), "key") + ")";
  return "";
}

std::string cut_text(std::string_view text, std::size_t max_chars) {
  return std::string(utf8_prefix(text, max_chars)) + "… (" + std::to_string(utf8_length(text)) + " chars)";
}

}  // namespace

std::string bounded_text(std::string_view json_text, std::size_t max_chars) {
  if (json_text.size() <= max_chars) return std::string(json_text);
  // A parser of its own: a long value would otherwise keep its memory for the thread's life.
  simdjson::dom::parser parser;
  element e;
  if (parser.parse(json_text.data(), json_text.size(), true).get(e)) return cut_text(json_text, max_chars);
  if (e.is_string()) return cut_string(e.get_string().value_unsafe(), max_chars / 2);
  std::string suffix = size_suffix(e);
  std::string out;
  for (const Limits& lim : kLevels) {
    out.clear();
    render(e, lim, 0, out);
    if (utf8_length(out) + suffix.size() <= max_chars) return out + suffix;
  }
  return cut_text(out, max_chars) + suffix;  // wide keys or numbers even at the tersest level
}

nlohmann::json bounded_json(std::string_view json_text, std::size_t max_chars) {
  if (json_text.size() <= max_chars) {
    auto j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? nlohmann::json(std::string(json_text)) : j;
  }
  return {{"abbreviated", bounded_text(json_text, max_chars)}, {"chars", json_text.size()}};
}

}  // namespace fencecheck
