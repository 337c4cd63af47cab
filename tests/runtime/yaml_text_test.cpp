#include "platform/yaml_text.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fencecheck {
namespace {

using Doc = nlohmann::ordered_json;

TEST(YamlText, MapsListsAndScalarsInBlockStyleKeepingTheirTypes) {
  Doc d = {{"kind", "Job"},
           {"spec", {{"completions", 3}, {"suspend", true}, {"args", Doc::array({"run-row", "no", "0755", "null"})}}},
           {"empty", Doc::object()},
           {"none", Doc::array()}};
  EXPECT_EQ(yaml_document(d),
            "kind: \"Job\"\n"
            "spec:\n"
            "  completions: 3\n"
            "  suspend: true\n"
            "  args:\n"
            "    - \"run-row\"\n"
            "    - \"no\"\n"
            "    - \"0755\"\n"
            "    - \"null\"\n"
            "empty: {}\n"
            "none: []\n");
}

TEST(YamlText, AnObjectInAListStartsOnTheDashLine) {
  Doc d = {{"containers", Doc::array({{{"name", "row"}, {"ports", Doc::array({1, 2})}}})}};
  EXPECT_EQ(yaml_document(d),
            "containers:\n"
            "  - name: \"row\"\n"
            "    ports:\n"
            "      - 1\n"
            "      - 2\n");
}

TEST(YamlText, AFileOfLinesIsALiteralBlockAndAnythingElseIsQuoted) {
  EXPECT_EQ(yaml_document({{"plan.jsonl", "{\"a\":1}\n{\"b\":\"×\"}\n"}}),
            "plan.jsonl: |\n  {\"a\":1}\n  {\"b\":\"×\"}\n");
  // No final newline, an empty line, a leading space, a tab: each would change in a block.
  for (const std::string s : {"one\ntwo", "one\n\ntwo\n", " one\ntwo\n", "one\ttab\n"}) {
    EXPECT_EQ(yaml_document({{"k", s}}), "k: " + Doc(s).dump() + "\n") << s;
  }
}

TEST(YamlText, KeysThatAreNotSimpleNamesAreQuoted) {
  EXPECT_EQ(yaml_document({{"app.kubernetes.io/name", 1}, {"a key", 2}, {"3x", 3}, {"On", 4}}),
            "app.kubernetes.io/name: 1\n\"a key\": 2\n\"3x\": 3\n\"On\": 4\n");
}

TEST(YamlText, InvalidUtf8BecomesAReplacementCharacterNotAnException) {
  EXPECT_EQ(yaml_document({{"k", std::string("a\xff") + "b"}}), "k: \"a\\ufffdb\"\n");
}

// Quoted scalars are ASCII (YAML readers refuse raw C1 controls, DEL and U+FEFF, and YAML 1.1
// ones take U+0085, U+2028 and U+2029 for line breaks); a literal block keeps other UTF-8
// as it is but never those.
TEST(YamlText, CharactersAYamlReaderWouldRefuseOrBreakAreEscaped) {
  EXPECT_EQ(yaml_document({{"k", "x\x7f\u00d7"}}), "k: \"x\\u007f\\u00d7\"\n");
  EXPECT_EQ(yaml_document({{"k", "a \u00d7 b\nc\n"}}), "k: |\n  a \u00d7 b\n  c\n");
  for (const std::string bad : {"a\u0085b\n", "a\u2028b\n", "a\u2029b\n", "\ufeffa\n", "a\u0090\n"}) {
    const std::string out = yaml_document({{"k", bad}});
    EXPECT_EQ(out.find('|'), std::string::npos) << out;
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
        << out;
  }
}

}  // namespace
}  // namespace fencecheck
