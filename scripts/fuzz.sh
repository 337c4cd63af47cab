#!/usr/bin/env bash
# Builds the libFuzzer target for the history readers with clang and runs it for a bounded
# time (default 30 s): ./scripts/fuzz.sh [SECONDS]. A crash leaves crash-* in build-fuzz/.
# ./scripts/fuzz.sh --build-only builds it and stops (scripts/test.sh does so beside the
# integration tests, at the lowest CPU priority, then runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
seconds="${1:-30}"
# Only the target and the libraries it links are built (fc_check and what it needs), not
# the tests; FENCECHECK_TESTS must stay ON because the target lives under tests/fuzz.
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DFENCECHECK_FUZZ=ON -DFENCECHECK_TESTS=ON -DFENCECHECK_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_history_reader
[ "$build_only" -eq 1 ] && exit 0
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp tests/fuzz/corpus/* "$corpus"/
cd build-fuzz
./tests/fuzz/fuzz_history_reader -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus" 2>&1 | tail -n 15
