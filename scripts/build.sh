#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), then configures and builds fencecheck in
# build/ (Release). Prints the path of the fencecheck binary last.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
echo "built $(pwd)/build/harness/fencecheck"
