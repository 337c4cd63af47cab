#include "checkers/edn/edn.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "checkers/event_source.h"

namespace fencecheck::edn {

namespace {

constexpr int kMaxDepth = 200;  // deeper nesting is no history; refuse it before the stack does
constexpr int kEof = std::char_traits<char>::eof();

bool is_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '\f'; }
bool is_delimiter(int c) {
  return c == kEof || is_space(c) || c == '(' || c == ')' || c == '[' || c == ']' || c == '{' ||
         c == '}' || c == '"' || c == ';';
}

// Histories become JSON, which must be UTF-8: reject anything else where it is read.
bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    unsigned cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (std::size_t k = 1; k < n; ++k) {
      auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 0x2) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr unsigned kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

bool is_hex(int c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

const Value* Value::get(std::string_view name) const {
  if (kind != Kind::kMap) return nullptr;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    if (items[i].is_keyword(name)) return &items[i + 1];
  }
  return nullptr;
}

std::string a_kind(Value::Kind k) {
  std::string_view n = kind_name(k);
  return (n[0] == 'i' || n[0] == 'e' ? "an " : "a ") + std::string(n);
}

std::string_view kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::kNil: return "nil";
    case Value::Kind::kBool: return "boolean";
    case Value::Kind::kInt: return "integer";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return "string";
    case Value::Kind::kChar: return "character";
    case Value::Kind::kKeyword: return "keyword";
    case Value::Kind::kSymbol: return "symbol";
    case Value::Kind::kList: return "list";
    case Value::Kind::kVector: return "vector";
    case Value::Kind::kSet: return "set";
    case Value::Kind::kMap: return "map";
    case Value::Kind::kTagged: return "tagged literal";
  }
  return "?";
}

nlohmann::json to_json(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNil: return nullptr;
    case Value::Kind::kBool: return v.boolean;
    case Value::Kind::kInt: return v.integer;
    case Value::Kind::kFloat: return std::isfinite(v.floating) ? nlohmann::json(v.floating) : nlohmann::json(v.text);
    case Value::Kind::kString:
    case Value::Kind::kChar:
    case Value::Kind::kKeyword:
    case Value::Kind::kSymbol: return v.text;
    case Value::Kind::kList:
    case Value::Kind::kVector:
    case Value::Kind::kSet: {
      nlohmann::json a = nlohmann::json::array();
      for (const Value& item : v.items) a.push_back(to_json(item));
      return a;
    }
    case Value::Kind::kMap: {
      nlohmann::json o = nlohmann::json::object();
      for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) o[key_text(v.items[i])] = to_json(v.items[i + 1]);
      return o;
    }
    case Value::Kind::kTagged: return to_json(v.items.at(0));
  }
  return nullptr;
}

std::string key_text(const Value& v) {
  if (v.kind == Value::Kind::kString || v.kind == Value::Kind::kKeyword || v.kind == Value::Kind::kSymbol) {
    return v.text;
  }
  return to_json(v).dump();
}

EdnParser::EdnParser(std::istream& in, std::string source) : in_(in.rdbuf()), source_(std::move(source)) {}

int EdnParser::peek() { return in_->sgetc(); }

int EdnParser::get() {
  int c = in_->sbumpc();
  if (c == '\n') {
    ++line_;
    column_ = 1;
  } else if (c != kEof) {
    ++column_;
  }
  return c;
}

void EdnParser::fail(std::size_t line, std::size_t column, const std::string& what) const {
  throw InputError(source_, line, "edn", "column " + std::to_string(column) + ": " + what);
}

void EdnParser::skip_space() {
  for (;;) {
    int c = peek();
    if (is_space(c)) {
      get();
    } else if (c == ';') {
      while (peek() != kEof && peek() != '\n') get();
    } else if (c == '#') {
      // Only `#_` is space-like; any other dispatch starts a form. One char of lookahead
      // past '#' is needed, so consume it and put it back if it is not '_'.
      std::size_t line = line_, column = column_;
      get();
      if (peek() != '_') {
        if (in_->sungetc() == kEof) fail(line, column, "cannot re-read '#'");
        line_ = line;
        column_ = column;
        return;
      }
      get();
      skip_space();
      if (peek() == kEof) fail(line, column, "#_ discards nothing: end of input");
      parse(1);
    } else {
      return;
    }
  }
}

bool EdnParser::next(Value& out) {
  skip_space();
  if (in_top_sequence_) {
    if (peek() == kEof) fail(top_line_, top_column_, std::string("sequence is not closed: missing '") + top_close_ + "'");
    if (peek() == top_close_) {
      get();
      in_top_sequence_ = false;
      return next(out);
    }
    out = parse(1);
    return true;
  }
  int c = peek();
  if (c == kEof) return false;
  if (c == '[' || c == '(') {
    top_line_ = line_;
    top_column_ = column_;
    top_close_ = c == '[' ? ']' : ')';
    get();
    in_top_sequence_ = true;
    return next(out);
  }
  out = parse(0);
  return true;
}

Value EdnParser::parse(int depth) {
  if (depth > kMaxDepth) fail(line_, column_, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
  skip_space();
  std::size_t line = line_, column = column_;
  int c = peek();
  Value v;
  switch (c) {
    case kEof: fail(line, column, "unexpected end of input, expected a value");
    case '(': get(); v = parse_collection(Value::Kind::kList, ')', depth); break;
    case '[': get(); v = parse_collection(Value::Kind::kVector, ']', depth); break;
    case '{': get(); v = parse_collection(Value::Kind::kMap, '}', depth); break;
    case ')':
    case ']':
    case '}': fail(line, column, std::string("unexpected '") + static_cast<char>(c) + "'");
    case '"': v = parse_string(); break;
    case '\\': v = parse_char(); break;
    case '#': {
      get();
      int d = peek();
      if (d == '{') {
        get();
        v = parse_collection(Value::Kind::kSet, '}', depth);
      } else if (d == '#') {
        get();
        std::string name;
        read_token(name);
        v.kind = Value::Kind::kFloat;
        v.text = name;
        if (name == "Inf") v.floating = std::numeric_limits<double>::infinity();
        else if (name == "-Inf") v.floating = -std::numeric_limits<double>::infinity();
        else if (name == "NaN") v.floating = std::numeric_limits<double>::quiet_NaN();
        else fail(line, column, "unknown symbolic value ##" + name);
      } else if (std::isalpha(d)) {
        v.kind = Value::Kind::kTagged;
        read_token(v.text);
        v.items.push_back(parse(depth + 1));
      } else {
        fail(line, column, "unsupported dispatch '#" + std::string(1, static_cast<char>(d)) + "'");
      }
      break;
    }
    default: v = parse_atom(); break;
  }
  v.line = line;
  v.column = column;
  return v;
}

Value EdnParser::parse_collection(Value::Kind kind, char close, int depth) {
  std::size_t line = line_, column = column_ - 1;
  Value v;
  v.kind = kind;
  for (;;) {
    skip_space();
    int c = peek();
    if (c == kEof) {
      fail(line, column, std::string(kind_name(kind)) + " is not closed: missing '" + close + "' before end of input");
    }
    if (c == close) {
      get();
      break;
    }
    v.items.push_back(parse(depth + 1));
  }
  if (kind == Value::Kind::kMap && v.items.size() % 2 != 0) {
    fail(line, column, "map has a key without a value");
  }
  return v;
}

Value EdnParser::parse_string() {
  std::size_t line = line_, column = column_;
  get();  // opening quote
  Value v;
  v.kind = Value::Kind::kString;
  for (;;) {
    int c = get();
    if (c == kEof) fail(line, column, "string is not closed before end of input");
    if (c == '"') break;
    if (c != '\\') {
      v.text += static_cast<char>(c);
      continue;
    }
    int e = get();
    switch (e) {
      case '"': v.text += '"'; break;
      case '\\': v.text += '\\'; break;
      case 'n': v.text += '\n'; break;
      case 't': v.text += '\t'; break;
      case 'r': v.text += '\r'; break;
      case 'b': v.text += '\b'; break;
      case 'f': v.text += '\f'; break;
      case 'u': {
        std::string hex;
        for (int i = 0; i < 4 && is_hex(peek()); ++i) hex += static_cast<char>(get());
        if (hex.size() != 4) fail(line_, column_, "\\u must be followed by 4 hex digits");
        unsigned cp = 0;
        std::from_chars(hex.data(), hex.data() + 4, cp, 16);
        if (cp >= 0xD800 && cp <= 0xDFFF) fail(line_, column_, "\\u" + hex + " is a lone surrogate");
        append_utf8(v.text, cp);
        break;
      }
      default: fail(line_, column_ - 2, "unknown escape '\\" + std::string(1, static_cast<char>(e)) + "' in string");
    }
  }
  if (!is_valid_utf8(v.text)) fail(line, column, "string is not valid UTF-8");
  return v;
}

Value EdnParser::parse_char() {
  std::size_t line = line_, column = column_;
  get();  // backslash
  Value v;
  v.kind = Value::Kind::kChar;
  if (peek() == kEof) fail(line, column, "character literal is cut short");
  std::string name(1, static_cast<char>(get()));
  while (!is_delimiter(peek())) name += static_cast<char>(get());
  if (!is_valid_utf8(name)) fail(line, column, "character literal is not valid UTF-8");
  if (name.size() == 1) v.text = name;
  else if (name == "newline") v.text = "\n";
  else if (name == "space") v.text = " ";
  else if (name == "tab") v.text = "\t";
  else if (name == "return") v.text = "\r";
  else if (name.size() == 5 && name[0] == 'u') {
    unsigned cp = 0;
    auto [p, ec] = std::from_chars(name.data() + 1, name.data() + 5, cp, 16);
    if (ec != std::errc() || p != name.data() + 5 || (cp >= 0xD800 && cp <= 0xDFFF)) {
      fail(line, column, "bad character \\" + name);
    }
    append_utf8(v.text, cp);
  } else {
    fail(line, column, "unknown character \\" + name);
  }
  return v;
}

void EdnParser::read_token(std::string& out) {
  std::size_t line = line_, column = column_;
  while (!is_delimiter(peek())) out += static_cast<char>(get());
  if (!is_valid_utf8(out)) fail(line, column, "token is not valid UTF-8");
}

Value EdnParser::parse_atom() {
  std::size_t line = line_, column = column_;
  std::string t;
  read_token(t);
  if (t.empty()) fail(line, column, "unexpected character '" + std::string(1, static_cast<char>(peek())) + "'");
  Value v;
  bool numeric = std::isdigit(static_cast<unsigned char>(t[0])) ||
                 ((t[0] == '-' || t[0] == '+') && t.size() > 1 && std::isdigit(static_cast<unsigned char>(t[1])));
  if (numeric) {
    std::string n = t[0] == '+' ? t.substr(1) : t;
    bool big = !n.empty() && (n.back() == 'N' || n.back() == 'M');
    if (big) n.pop_back();
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), v.integer);
    if (ec == std::errc() && p == n.data() + n.size()) {
      v.kind = Value::Kind::kInt;
      return v;
    }
    char* end = nullptr;
    v.floating = std::strtod(n.c_str(), &end);
    if (n.empty() || end != n.c_str() + n.size()) fail(line, column, "malformed number \"" + t + "\"");
    v.kind = Value::Kind::kFloat;
    v.text = t;
    return v;
  }
  if (t[0] == ':') {
    if (t.size() == 1) fail(line, column, "keyword without a name");
    v.kind = Value::Kind::kKeyword;
    v.text = t.substr(1);
    return v;
  }
  if (t == "nil") return v;
  if (t == "true" || t == "false") {
    v.kind = Value::Kind::kBool;
    v.boolean = t == "true";
    return v;
  }
  v.kind = Value::Kind::kSymbol;
  v.text = t;
  return v;
}

}  // namespace fencecheck::edn
