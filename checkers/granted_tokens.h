// What the tokens checker must remember of every grant of one key, however old, so that a
// token granted twice is found however far apart the two grants are (docs/checkers.md,
// "tokens"): the set of tokens granted, and the details of each grant for the violation
// that names it. Internal to checkers/; not thread-safe; nothing here throws except
// std::bad_alloc.
//
// Memory: about 8 bytes per distinct token while tokens arrive in increasing order (a
// sorted vector; a std::set holds the few that arrive below the highest), plus the
// archived grants delta-packed as varints, about 10–16 bytes each. Finding the details of
// an archived grant decodes the chunks whose token range holds it (64 grants a chunk).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkers/history.h"

namespace fencecheck {

// One ok acquire that carried a token.
struct Grant {
  std::uint32_t key;
  std::uint32_t node;
  std::int64_t process;
  Nanos invoked;
  Nanos completed;
  std::uint64_t index;  // of the ok completion
  Token token;
};

// The tokens granted on one key.
class TokenSet {
 public:
  // Adds `t`; false when it was there already.
  bool insert(Token t);

 private:
  std::vector<Token> increasing_;  // sorted; most tokens are appended at the end
  std::set<Token> below_;          // tokens that arrived below increasing_.back()
};

// Grants of one key, appended in the order they completed, packed.
class GrantArchive {
 public:
  void append(const Grant& g);
  // The last appended grant with token `t`, if any.
  std::optional<Grant> latest_with(Token t) const;

 private:
  struct Chunk {
    std::size_t offset;  // into bytes_
    std::size_t count = 0;
    Token min_token;
    Token max_token;
  };
  // Fields are coded relative to the previous grant of the same chunk.
  struct Cursor {
    Grant prev{};
    std::size_t at = 0;
  };
  Grant decode(Cursor& c) const;

  std::vector<std::uint8_t> bytes_;
  std::vector<Chunk> chunks_;
  Grant last_{};
};

}  // namespace fencecheck
