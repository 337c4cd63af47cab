#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), then configures and builds in build/
# (Release). With no argument it builds everything (tests and benchmarks included); with
# arguments it builds only those CMake targets, e.g. `./scripts/build.sh fencecheck` (the
# controller and the clock library it loads, what the quick start needs).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
echo "built $(pwd)/build/harness/fencecheck"
