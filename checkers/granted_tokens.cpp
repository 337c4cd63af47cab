#include "checkers/granted_tokens.h"

#include <algorithm>

namespace fencecheck {
namespace {

constexpr std::size_t kChunkGrants = 64;

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

std::uint64_t get_varint(const std::vector<std::uint8_t>& in, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    std::uint8_t b = in[at++];
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
}

// Signed differences as unsigned varints (zigzag), computed without signed overflow.
void put_delta(std::vector<std::uint8_t>& out, std::int64_t now, std::int64_t before) {
  auto d = static_cast<std::uint64_t>(now) - static_cast<std::uint64_t>(before);
  put_varint(out, (d << 1) ^ (0 - (d >> 63)));
}

std::int64_t get_delta(const std::vector<std::uint8_t>& in, std::size_t& at, std::int64_t before) {
  std::uint64_t z = get_varint(in, at);
  std::uint64_t d = (z >> 1) ^ (0 - (z & 1));
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(before) + d);
}

}  // namespace

bool TokenSet::insert(Token t) {
  if (increasing_.empty() || t > increasing_.back()) {
    increasing_.push_back(t);
    return true;
  }
  if (std::binary_search(increasing_.begin(), increasing_.end(), t)) return false;
  return below_.insert(t).second;
}

void GrantArchive::append(const Grant& g) {
  if (chunks_.empty() || chunks_.back().count == kChunkGrants) {
    chunks_.push_back(Chunk{bytes_.size(), 0, g.token, g.token});
    last_ = Grant{};
  }
  Chunk& c = chunks_.back();
  put_delta(bytes_, g.token, last_.token);
  put_delta(bytes_, static_cast<std::int64_t>(g.index), static_cast<std::int64_t>(last_.index));
  put_delta(bytes_, g.process, last_.process);
  put_delta(bytes_, g.node, last_.node);
  put_delta(bytes_, g.invoked, last_.invoked);
  put_delta(bytes_, g.completed, g.invoked);
  put_varint(bytes_, g.key);
  c.min_token = std::min(c.min_token, g.token);
  c.max_token = std::max(c.max_token, g.token);
  ++c.count;
  last_ = g;
}

Grant GrantArchive::decode(Cursor& c) const {
  Grant g;
  g.token = get_delta(bytes_, c.at, c.prev.token);
  g.index = static_cast<std::uint64_t>(get_delta(bytes_, c.at, static_cast<std::int64_t>(c.prev.index)));
  g.process = get_delta(bytes_, c.at, c.prev.process);
  g.node = static_cast<std::uint32_t>(get_delta(bytes_, c.at, c.prev.node));
  g.invoked = get_delta(bytes_, c.at, c.prev.invoked);
  g.completed = get_delta(bytes_, c.at, g.invoked);
  g.key = static_cast<std::uint32_t>(get_varint(bytes_, c.at));
  c.prev = g;
  return g;
}

std::optional<Grant> GrantArchive::latest_with(Token t) const {
  for (auto chunk = chunks_.rbegin(); chunk != chunks_.rend(); ++chunk) {
    if (t < chunk->min_token || t > chunk->max_token) continue;
    Cursor cursor{Grant{}, chunk->offset};
    std::optional<Grant> found;
    for (std::size_t i = 0; i < chunk->count; ++i) {
      Grant g = decode(cursor);
      if (g.token == t) found = g;
    }
    if (found) return found;
  }
  return std::nullopt;
}

}  // namespace fencecheck
