#include "checkers/canonical_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace fencecheck {
namespace {

std::string canon(std::string_view text) {
  auto c = canonical_json_text(text);
  EXPECT_TRUE(c.has_value()) << text;
  return c.value_or("<not json>");
}

TEST(CanonicalJson, SortsKeysAtEveryDepth) {
  EXPECT_EQ(canon(R"({"b":1,"a":2})"), R"({"a":2,"b":1})");
  EXPECT_EQ(canon(R"({"a":2,"b":1})"), R"({"a":2,"b":1})");
  EXPECT_EQ(canon(R"( { "z" : [ {"y":1, "x":[true, null]} ], "a": {"d":"s", "c":1.5} } )"),
            R"({"a":{"c":1.5,"d":"s"},"z":[{"x":[true,null],"y":1}]})");
  EXPECT_EQ(canon(R"({"é":1,"e":2,"E":3,"":4})"), R"({"":4,"E":3,"e":2,"é":1})");  // bytewise
  EXPECT_EQ(canon(R"({"b":1,"a":1,"a":2})"), R"({"a":1,"a":2,"b":1})");  // duplicates stay
  EXPECT_EQ(canon("{}"), "{}");
  EXPECT_EQ(canon("[]"), "[]");
}

TEST(CanonicalJson, EqualNumbersPrintAlike) {
  for (const char* one : {"1", "1.0", "1e0", "10e-1", "0.1e1", "1.000"}) EXPECT_EQ(canon(one), "1") << one;
  EXPECT_EQ(canon("-0.0"), "0");
  EXPECT_EQ(canon("-0"), "0");
  EXPECT_EQ(canon("1e2"), "100");
  EXPECT_EQ(canon("-42.0"), "-42");
  EXPECT_EQ(canon("0.1"), "0.1");
  EXPECT_EQ(canon("0.10000"), "0.1");
  EXPECT_EQ(canon("1.5e300"), "1.5e+300");
  EXPECT_EQ(canon("2.5E-7"), "2.5e-07");
  EXPECT_EQ(canon("[1.0,{\"a\":2.50}]"), R"([1,{"a":2.5}])");
}

TEST(CanonicalJson, BigIntegers) {
  EXPECT_EQ(canon("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(canon("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(canon("18446744073709551615"), "18446744073709551615");  // only fits unsigned
  EXPECT_EQ(canon("9007199254740993"), "9007199254740993");          // beyond a double's 2^53
  // An integral double within [-2^63, 2^64) prints as the integer it is.
  EXPECT_EQ(canon("1e19"), "10000000000000000000");
  EXPECT_EQ(canon("10000000000000000000"), "10000000000000000000");
  EXPECT_EQ(canon("-9.223372036854775808e18"), "-9223372036854775808");
  EXPECT_EQ(canon("1e20"), "1e+20");  // beyond 64 bits: a double, in its shortest form
}

TEST(CanonicalJson, StringsEscapeOneWay) {
  EXPECT_EQ(canon(R"("\u00e9")"), "\"\xc3\xa9\"");                   // é either way
  EXPECT_EQ(canon("\"\xc3\xa9\""), "\"\xc3\xa9\"");
  EXPECT_EQ(canon(R"("\ud83d\ude00")"), "\"\xf0\x9f\x98\x80\"");     // a surrogate pair
  EXPECT_EQ(canon(R"("a\/b")"), R"("a/b")");
  EXPECT_EQ(canon(R"("\u0041\u0001\u001F")"), R"("A\u0001\u001f")");
  EXPECT_EQ(canon(R"("q\"b\\n\n\t\r\b\f")"), R"("q\"b\\n\n\t\r\b\f")");
  EXPECT_EQ(canon(R"({"k\u0065y":"\u007f"})"), "{\"key\":\"\x7f\"}");
}

TEST(CanonicalJson, AgreesWithNlohmannOnStringsAndIntegers) {
  // The EDN reader and the controller build values with nlohmann::json; their dump() and
  // the canonical text must agree wherever nlohmann's own form is already canonical.
  nlohmann::json j = {{"s", std::string("tab\there \x01 \"q\" \\ /\xe2\x82\xac")},
                      {"n", -12345678901234},
                      {"l", {1, "two", nullptr, true, {{"z", 1}, {"a", 2}}}}};
  EXPECT_EQ(canon(j.dump()), j.dump());
}

TEST(CanonicalJson, IsIdempotent) {
  for (const char* text : {R"({"b":[1.0,{"d":null,"c":"\u00e9"}],"a":-0.5})", "[[[]]]", "\"\"", "true"}) {
    std::string once = canon(text);
    EXPECT_EQ(canon(once), once) << text;
  }
}

TEST(CanonicalJson, NotJsonIsNullopt) {
  for (const char* text : {"", "{", "[1,]", "nan", "1 2", "{\"a\":}", "'x'", "\"\xff\""}) {
    EXPECT_FALSE(canonical_json_text(text).has_value()) << text;
  }
}

TEST(CanonicalJson, ElementOverloadAndAppend) {
  simdjson::dom::parser parser;
  simdjson::dom::element e = parser.parse(std::string_view(R"({"y":[2.0],"x":1})"));
  EXPECT_EQ(canonical_json(e), R"({"x":1,"y":[2]})");
  std::string out = "prefix:";
  append_canonical_json(e, out);
  EXPECT_EQ(out, R"(prefix:{"x":1,"y":[2]})");
}

}  // namespace
}  // namespace fencecheck
