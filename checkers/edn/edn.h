// A small reader of EDN (https://github.com/edn-format/edn), enough for Jepsen's
// history.edn: nil, booleans, integers (N suffix), floats (M suffix, ##Inf, ##NaN),
// strings with escapes, characters, keywords, symbols, lists, vectors, maps, sets, tagged
// literals (#tag form: the tag is kept, the form is the value), `;` comments and `#_`
// discards. No external dependency.
//
// EdnParser streams: next() returns one top-level form at a time, except that it enters a
// top-level vector or list and returns its elements one by one, so a history written as
// one big `[{...} {...}]` is read with one op in memory at a time. Malformed input throws
// InputError(source, line, "edn", "column C: …"). Not thread-safe; does not own the stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck::edn {

struct Value {
  enum class Kind { kNil, kBool, kInt, kFloat, kString, kChar, kKeyword, kSymbol, kList, kVector, kSet, kMap, kTagged };
  Kind kind = Kind::kNil;
  bool boolean = false;
  std::int64_t integer = 0;
  double floating = 0;
  // string/char: the text; keyword: the name without ':'; symbol: the name; tagged: the tag.
  std::string text;
  // list/vector/set: the items; map: key, value, key, value…; tagged: the one form.
  std::vector<Value> items;
  std::size_t line = 0, column = 0;  // where the form starts, 1-based

  bool is_keyword(std::string_view name) const { return kind == Kind::kKeyword && text == name; }
  // The value of keyword key `name` in a map, or nullptr.
  const Value* get(std::string_view name) const;
};

std::string_view kind_name(Value::Kind k);
std::string a_kind(Value::Kind k);  // "an integer", "a map"

// JSON for a value: nil → null, keywords/symbols/chars → strings (no ':'), lists, vectors
// and sets → arrays, maps → objects (keys as key_text()), tagged → the tagged form.
nlohmann::json to_json(const Value& v);
// A map key or tuple key as text: strings and keywords by name, anything else as JSON.
std::string key_text(const Value& v);

class EdnParser {
 public:
  EdnParser(std::istream& in, std::string source);
  bool next(Value& out);

 private:
  int peek();
  int get();
  void skip_space();  // whitespace, commas, comments and #_ discards
  Value parse(int depth);
  Value parse_collection(Value::Kind kind, char close, int depth);
  Value parse_string();
  Value parse_char();
  Value parse_atom();  // number, keyword, symbol, nil, true, false
  void read_token(std::string& out);
  [[noreturn]] void fail(std::size_t line, std::size_t column, const std::string& what) const;

  std::streambuf* in_;
  std::string source_;
  std::size_t line_ = 1, column_ = 1;
  bool in_top_sequence_ = false;
  char top_close_ = 0;
  std::size_t top_line_ = 0, top_column_ = 0;
};

}  // namespace fencecheck::edn
