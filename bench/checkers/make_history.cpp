// make_history DIR EVENTS [PROCESSES KEYS SEED]: writes a synthetic valid run directory
// (history.jsonl, resource.jsonl) for measuring `fencecheck check` on large histories.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/checkers/synthetic_history.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: make_history DIR EVENTS [PROCESSES KEYS SEED]\n");
    return 3;
  }
  int processes = argc > 3 ? std::atoi(argv[3]) : 32;
  int keys = argc > 4 ? std::atoi(argv[4]) : 8;
  unsigned long long seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 42;
  auto info = fencecheck::bench::write_synthetic_history(argv[1], std::strtoull(argv[2], nullptr, 10),
                                                         processes, keys, seed);
  std::printf("%llu events, %llu resource entries in %s\n",
              static_cast<unsigned long long>(info.events),
              static_cast<unsigned long long>(info.resource_entries), argv[1]);
  return 0;
}
