// FNV-1a, 64 bits, over a sequence of strings: a short stable name for what something was
// made from (a cached server image's inputs, a suite row's arguments). Each string is
// followed by the byte 0xff (no byte of UTF-8 text), so that ("ab", "c") and ("a", "bc")
// differ. Not a cryptographic hash: names, not secrets. Header-only, no state shared.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace fencecheck {

class Fnv1a64 {
 public:
  void add(std::string_view text) {
    for (unsigned char c : text) mix(c);
    mix(0xff);
  }
  std::string hex() const {  // 16 lowercase hex digits
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h_));
    return out;
  }

 private:
  void mix(unsigned char c) {
    h_ ^= c;
    h_ *= 1099511628211ULL;
  }
  std::uint64_t h_ = 14695981039346656037ULL;
};

inline std::string fnv1a64_hex(const std::vector<std::string>& parts) {
  Fnv1a64 h;
  for (const std::string& p : parts) h.add(p);
  return h.hex();
}

}  // namespace fencecheck
