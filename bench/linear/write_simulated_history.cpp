// write_simulated_history DIR EVENTS [BLOCKING [SEED]]: writes DIR/history.jsonl, the
// simulated mutex history of simulated_history.h (32 processes, 8 keys, 0.5 % of the ops
// info; BLOCKING 1 makes acquires wait for the lock) with EVENTS events, so that
// `fencecheck check --checkers linearizable DIR` can be measured on the same shape as
// linear_bench's BM_MutexMillionEvents, reading included.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/linear/simulated_history.h"

int main(int argc, char** argv) {
  using namespace fencecheck;
  if (argc < 3) {
    std::fprintf(stderr, "usage: write_simulated_history DIR EVENTS [BLOCKING [SEED]]\n");
    return 3;
  }
  bench::SimulationConfig cfg;
  std::uint64_t events = std::strtoull(argv[2], nullptr, 10);
  cfg.ops = events / 2;
  cfg.info_ops = cfg.ops / 200;
  cfg.blocking_acquire = argc > 3 && std::atoi(argv[3]) != 0;
  if (argc > 4) cfg.seed = std::strtoull(argv[4], nullptr, 10);
  std::string path = std::string(argv[1]) + "/history.jsonl";
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) {
    std::perror(path.c_str());
    return 3;
  }
  bench::SimulatedHistory history(cfg);
  std::uint64_t written = 0;
  for (Event e; history.next(e); ++written) {
    std::fprintf(out, "{\"index\":%llu,\"time\":%lld,\"process\":%lld,\"type\":\"%s\",\"f\":\"%s\",\"key\":\"%s\",\"value\":%s}\n",
                 static_cast<unsigned long long>(e.index), static_cast<long long>(e.time),
                 static_cast<long long>(e.process), std::string(to_string(e.type)).c_str(), e.f_name.c_str(),
                 e.key.c_str(), e.value.c_str());
  }
  if (std::fclose(out) != 0) {
    std::perror(path.c_str());
    return 3;
  }
  std::printf("%llu events in %s\n", static_cast<unsigned long long>(written), path.c_str());
  return 0;
}
