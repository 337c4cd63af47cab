#!/usr/bin/env bash
# The test suite, as CI runs it: set up, build, run every ctest test (label `unit`: seconds,
# no servers; label `integration`: real servers, network namespaces as root), then a short
# bounded fuzz run of the history readers. Run only the unit tests with:
#   ctest --test-dir build -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# The docker tests' image downloads and unpacks Debian packages: warm its layer cache while
# the compiler has the CPUs (their fixture then only adds the binaries; its log says how
# the warm-up went, and a failed warm-up is redone there).
mkdir -p build
trap 'tests/docker/dockerd.sh stop >/dev/null 2>&1 || true' EXIT  # whatever fails, no daemon stays
tests/docker/dockerd.sh warm >build/docker-warm.log 2>&1 &
warm=$!
./scripts/build.sh
wait "$warm" || echo "test.sh: warming the docker image failed (build/docker-warm.log); the docker fixture retries"
ctest --test-dir build --output-on-failure -j2 -L unit
# The docker tests need the private dockerd their fixture starts: here, a skip would pass
# vacuously, so they fail instead when it cannot start.
FENCECHECK_REQUIRE_DOCKER=1 ctest --test-dir build --output-on-failure -L integration
./scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
