#!/usr/bin/env bash
# Builds the libFuzzer target for the history readers with clang and runs it for a bounded
# time (default 30 s): ./scripts/fuzz.sh [SECONDS]. A crash leaves crash-* in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DFENCECHECK_FUZZ=ON -DFENCECHECK_TESTS=ON -DFENCECHECK_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_history_reader
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp tests/fuzz/corpus/* "$corpus"/
cd build-fuzz
./tests/fuzz/fuzz_history_reader -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus" 2>&1 | tail -n 15
