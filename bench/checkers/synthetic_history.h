// A synthetic, valid lock-append history for benchmarks: `processes` clients take locks on
// `keys` keys through a correct lock (one holder per key, tokens increasing), read, append
// and release; acquires of a held key fail. Written as history.jsonl + resource.jsonl.
#pragma once

#include <cstdint>
#include <string>

namespace fencecheck::bench {

struct SyntheticHistory {
  std::uint64_t events = 0;
  std::uint64_t resource_entries = 0;
};

SyntheticHistory write_synthetic_history(const std::string& dir, std::uint64_t events,
                                         int processes, int keys, std::uint64_t seed);

}  // namespace fencecheck::bench
