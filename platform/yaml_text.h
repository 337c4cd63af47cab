// YAML text of a JSON value, in block style, for manifests a person reads and kubectl or
// podman applies (`fencecheck suite k8s-job`). Every string is written double-quoted as a
// JSON string (a YAML 1.2 double-quoted scalar), so no value is ever read back as another
// type ("no", "0755", "null"); a string of several lines, each printable and none starting
// with a space, is written as a literal block (`|`) instead, so that a file embedded in a
// manifest stays readable. Keys are plain when they are simple names, else quoted.
//
// Pure functions, thread-safe; never throw on content (invalid UTF-8 becomes U+FFFD).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fencecheck {

// One YAML document of `value` (an object or array), ending in a newline, without "---".
std::string yaml_document(const nlohmann::ordered_json& value);

}  // namespace fencecheck
