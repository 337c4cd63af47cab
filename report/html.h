// Text made safe for the places a report puts it: HTML text and attribute values, XML
// (JUnit), and JSON inside a <script> element. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fencecheck::report {

// & < > " ' as entities: safe in element text and in quoted attribute values alike.
std::string html_escape(std::string_view s);

// XML 1.0 text and attribute values: html_escape, and characters XML forbids (control
// characters other than tab, newline, carriage return; bytes that are not UTF-8) replaced
// by U+FFFD, so that a history value can never make the document ill-formed.
std::string xml_escape(std::string_view s);

// `j` as JSON text that can sit inside <script type="application/json"> unchanged: '<',
// '>' and '&' (which JSON allows only inside strings) become \u003c \u003e \u0026, and
// U+2028/U+2029 become \u2028 \u2029, so no value can close the element ("</script>") or
// open a comment. Invalid UTF-8 in strings is replaced, never thrown on.
std::string script_json(const nlohmann::json& j);

// An argument as a POSIX shell word: unchanged when it has only safe characters, else
// single-quoted.
std::string shell_word(std::string_view arg);

}  // namespace fencecheck::report
