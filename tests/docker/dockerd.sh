#!/usr/bin/env bash
# A private dockerd for the docker integration tests, so that they never touch (or need)
# the host's: --iptables=false --ip-masq=false --bridge=none (a default dockerd rewrites the
# host firewall, FORWARD policy DROP), its own data root, exec root and socket.
#
#   tests/docker/dockerd.sh start [BUILD_DIR]   start it (if not running) and, with
#                                               BUILD_DIR, build the fencecheck image into
#                                               it from that build (docker/build.sh --prebuilt)
#   tests/docker/dockerd.sh warm                start it and build the image's servers stage
#                                               (the layer cache of a later `start BUILD_DIR`)
#   tests/docker/dockerd.sh stop                stop it; images stay in the data root
#
# The tests reach it at DOCKER_HOST=unix:///run/fencecheck-test-dockerd/docker.sock. When
# it cannot start, `start` writes the reason to /run/fencecheck-test-dockerd/unavailable
# and exits 0: the tests then skip, naming it (and fail when FENCECHECK_REQUIRE_DOCKER=1).
set -euo pipefail
run=/run/fencecheck-test-dockerd
data=/var/lib/fencecheck-test-docker
socket=$run/docker.sock
export DOCKER_HOST=unix://$socket
repo="$(cd "$(dirname "$0")/../.." && pwd)"

running() { [ -f "$run/dockerd.pid" ] && kill -0 "$(cat "$run/dockerd.pid")" 2>/dev/null; }
unavailable() {
  echo "$1" >"$run/unavailable"
  echo "dockerd.sh: $1" >&2
  exit 0
}

case "${1:-}" in
  start | warm)
    mkdir -p "$run"
    rm -f "$run/unavailable"
    if ! running; then
      [ "$(id -u)" -eq 0 ] || unavailable "a private dockerd needs root"
      command -v dockerd >/dev/null || unavailable "dockerd is not installed (scripts/setup.sh installs docker.io)"
      # dockerd always makes /run/docker/plugins, whatever its exec root: remember to remove it.
      [ -e /run/docker ] || touch "$run/made-run-docker"
      dockerd --iptables=false --ip-masq=false --bridge=none --data-root "$data" --exec-root "$run/exec" \
        -H "unix://$socket" --pidfile "$run/dockerd.pid" >"$run/dockerd.log" 2>&1 &
      for _ in $(seq 100); do
        docker version >/dev/null 2>&1 && break
        sleep 0.2
      done
      docker version >/dev/null 2>&1 || unavailable "dockerd did not answer within 20 s: $(tail -3 "$run/dockerd.log")"
    fi
    if [ "$1" = warm ]; then
      "$repo/docker/build.sh" --servers-only
    elif [ -n "${2:-}" ]; then
      "$repo/docker/build.sh" --prebuilt "$2"
    fi
    ;;
  stop)
    if running; then
      pid=$(cat "$run/dockerd.pid")
      kill "$pid"
      for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    # dockerd leaves its default network namespace mounted in the exec root.
    awk -v run="$run" 'index($2, run) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l
    if [ -e "$run/made-run-docker" ]; then
      rmdir /run/docker/plugins /run/docker 2>/dev/null || true
    fi
    rm -rf "$run"
    ;;
  *) echo "usage: dockerd.sh start [BUILD_DIR] | warm | stop" >&2; exit 2 ;;
esac
