#!/usr/bin/env bash
# Sets up (Debian packages), builds, and runs the default test end to end:
# Redis locks, the lock-append workload, a paused lock holder, an unfenced resource, 30 s.
# Extra arguments go to `fencecheck run` (e.g. --resource fenced). Exits with fencecheck's
# code: 1 means the violation of Kleppmann's article was found.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh fencecheck
exec ./build/harness/fencecheck run "$@"
