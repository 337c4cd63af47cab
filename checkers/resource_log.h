// One line of resource.jsonl: the fenced resource's own log, in the order it applied
// requests (docs/history.md). Plain value type.
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
  enum class Op { kRead, kWrite, kCas };
  Op op = Op::kRead;  // "read", "write" or "cas" (compare-and-set, the `cas` workload)
  std::optional<Token> token;
  std::string value;   // canonical JSON text (canonical_json.h): read, written or set
  std::string expect;  // cas only: the value the cas expected, canonical JSON
  bool accepted = false;
  std::string reason;  // why rejected; empty when accepted
  std::string client;  // node that sent the request
  std::size_t line = 0;
};

// "read", "write" or "cas".
inline const char* to_string(ResourceEntry::Op op) {
  switch (op) {
    case ResourceEntry::Op::kWrite: return "write";
    case ResourceEntry::Op::kCas: return "cas";
    case ResourceEntry::Op::kRead: break;
  }
  return "read";
}

}  // namespace fencecheck
