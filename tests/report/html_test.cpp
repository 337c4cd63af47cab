// Escaping (report/html.h): nothing from a history can end a <script> element, break an
// attribute, or make XML ill-formed.
#include <gtest/gtest.h>

#include "report/html.h"

namespace fencecheck::report {
namespace {

using nlohmann::json;

TEST(Html, EscapesTextAndAttributes) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html_escape("plain é"), "plain é");
}

TEST(Html, ScriptJsonCannotCloseItsElementAndParsesBackEqual) {
  json v = {{"key", "</script><script>alert(1)</script>"}, {"c", "<!-- x -->"}, {"amp", "a&b"},
            {"ls", "line\u2028sep\u2029"}, {"n", 3}};
  const std::string text = script_json(v);
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(text.find('>'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(json::parse(text), v);
}

TEST(Html, ScriptJsonReplacesInvalidUtf8InsteadOfThrowing) {
  json v = std::string("bad \xC3 byte");
  EXPECT_NO_THROW(script_json(v));
  EXPECT_EQ(json::parse(script_json(v)).get<std::string>().substr(0, 4), "bad ");
}

TEST(Html, XmlEscapeDropsWhatXmlForbids) {
  EXPECT_EQ(xml_escape("a\x01" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(xml_escape("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(xml_escape("\xFF"), "\xEF\xBF\xBD");
  EXPECT_EQ(xml_escape("é <x>"), "é &lt;x&gt;");
}

TEST(Html, ShellWordsQuoteOnlyWhenNeeded) {
  EXPECT_EQ(shell_word("--seed"), "--seed");
  EXPECT_EQ(shell_word("persistence=none"), "persistence=none");
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word(""), "''");
}

}  // namespace
}  // namespace fencecheck::report
