#!/usr/bin/env bash
# The test suite, as CI runs it: set up, build, run every ctest test (label `unit`: seconds,
# no servers; label `integration`: real servers, network namespaces as root), then a short
# bounded fuzz run of the history readers. Run only the unit tests with:
#   ctest --test-dir build -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
phase() { echo "test.sh: $1 at $((SECONDS / 60)) min $((SECONDS % 60)) s"; }
./scripts/setup.sh
phase "set up"
# The docker tests' image downloads and unpacks Debian packages: warm its layer cache while
# the compiler has the CPUs (their fixture then only adds the binaries; its log says how
# the warm-up went, and a failed warm-up is redone there).
mkdir -p build
background=""
cleanup() {
  tests/docker/dockerd.sh stop >/dev/null 2>&1 || true  # whatever fails, no daemon stays
  if [ -n "$background" ]; then kill -- "-$background" 2>/dev/null || true; fi  # its process group
}
trap cleanup EXIT
tests/docker/dockerd.sh warm >build/docker-warm.log 2>&1 &
warm=$!
# First what the integration tests need (fencecheck, its libraries, their executables).
./scripts/build.sh integration_tests
phase "integration tests built"
wait "$warm" || echo "test.sh: warming the docker image failed (build/docker-warm.log); the docker fixture retries"
# The integration tests mostly wait on servers and time limits (together about half a core
# busy), so the rest compiles beside them at idle CPU priority: the unit tests, the
# benchmarks, then the fuzz target's clang build (a second compile, with sanitizers, of the
# libraries it links). An idle task gets only the CPU the tests leave; the tests that judge
# timing run alone (RUN_SERIAL) and see no more than a preempted idle task.
setsid chrt --idle 0 nice -n 19 bash -c 'cmake --build build -j2 --target unit_tests benchmarks &&
  ./scripts/fuzz.sh --build-only' >build/background-build.log 2>&1 &
background=$!
# The docker tests need the private dockerd their fixture starts: here, a skip would pass
# vacuously, so they fail instead when it cannot start. Three tests at a time (each keeps
# about a fifth of a core busy; most of a test is waiting on servers and time limits):
# tests that share the docker daemon or the ssh hosts hold a RESOURCE_LOCK, and those that
# judge timing run alone (RUN_SERIAL; tests/CMakeLists.txt, fc_add_test's TIMED).
FENCECHECK_REQUIRE_DOCKER=1 ctest --test-dir build --output-on-failure -j3 -L integration
phase "integration tests done"
if ! wait "$background"; then
  background=""
  tail -n 30 build/background-build.log
  echo "test.sh: building the unit tests, benchmarks or fuzz target failed (build/background-build.log)" >&2
  exit 1
fi
background=""
phase "unit tests, benchmarks and fuzz target built"
ctest --test-dir build --output-on-failure -j2 -L unit
phase "unit tests done"
./scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
phase "done"
