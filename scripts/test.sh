#!/usr/bin/env bash
# The test suite, as CI runs it: set up, build, run every ctest test (label `unit`: seconds,
# no servers; label `integration`: real servers, network namespaces as root), then a short
# bounded fuzz run of the history readers. Run only the unit tests with:
#   ctest --test-dir build -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
ctest --test-dir build --output-on-failure -j2 -L unit
ctest --test-dir build --output-on-failure -L integration
./scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
