// One line of resource.jsonl: the fenced resource's own log, in the order it applied
// requests (DESIGN.md, "History format"). Plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "checkers/history.h"

namespace fencecheck {

struct ResourceEntry {
  std::uint64_t seq = 0;
  Nanos time = 0;
  std::string key;
  bool is_write = false;  // op: "write" or "read"
  std::optional<Token> token;
  std::string value;  // canonical JSON text (canonical_json.h)
  bool accepted = false;
  std::string reason;  // why rejected; empty when accepted
  std::string client;  // node that sent the request
  std::size_t line = 0;
};

}  // namespace fencecheck
