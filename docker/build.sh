#!/usr/bin/env bash
# Builds the fencecheck image (docker/Dockerfile) into the dockerd that `docker` talks to
# ($DOCKER_HOST or the default socket).
#
#   docker/build.sh [--tag NAME] [--prebuilt BUILD_DIR | --servers-only]
#
# --tag NAME            image name (default: fencecheck)
# --prebuilt BUILD_DIR  take fencecheck, libfcclock.so and fclazydisk from a host build (BUILD_DIR/harness)
#                       instead of compiling them again inside the image; CI's path. Both
#                       must come from Debian 12, like the image.
# --servers-only        build the base and the `servers` stage (NAME-servers) alone: warms
#                       the layer cache for a later --prebuilt build (scripts/test.sh)
#
# The Dockerfile starts FROM debian:bookworm. When the daemon does not have that image and
# cannot pull it (no registry reachable), this script makes it: debootstrap --variant=minbase
# from the Debian mirror ($DEBIAN_MIRROR, default http://deb.debian.org/debian), then
# `docker import` (about a minute). Needs root for debootstrap.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=fencecheck
prebuilt=""
servers_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --prebuilt) prebuilt="$2"; shift 2 ;;
    --servers-only) servers_only=1; shift ;;
    *) echo "usage: docker/build.sh [--tag NAME] [--prebuilt BUILD_DIR | --servers-only]" >&2; exit 2 ;;
  esac
done
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base=debian:bookworm
# The legacy builder needs no buildx plugin and builds only up to --target; a user with
# buildx may set DOCKER_BUILDKIT=1.
export DOCKER_BUILDKIT="${DOCKER_BUILDKIT:-0}"

if ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
  echo "docker/build.sh: no docker daemon answers (DOCKER_HOST=${DOCKER_HOST:-unset}); start dockerd" \
       "or point DOCKER_HOST at one" >&2
  exit 3
fi

say() { echo "docker/build.sh: $*"; }
started=$(date +%s)

if ! docker image inspect "$base" >/dev/null 2>&1; then
  if docker pull "$base" >/dev/null 2>&1; then
    say "pulled $base"
  else
    command -v debootstrap >/dev/null || { echo "docker/build.sh: $base cannot be pulled and" \
      "debootstrap is missing (apt-get install debootstrap, or scripts/setup.sh)" >&2; exit 3; }
    rootfs=$(mktemp -d /var/tmp/fencecheck-rootfs.XXXXXX)
    trap 'rm -rf "$rootfs"' EXIT
    say "no registry: making $base with debootstrap from $mirror"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
      tail -20 "$rootfs.log" >&2; rm -f "$rootfs.log"; exit 1; }
    rm -f "$rootfs.log"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import - "$base" >/dev/null
    rm -rf "$rootfs"
    trap - EXIT
    say "made $base ($(( $(date +%s) - started )) s so far)"
  fi
fi

# --network host: RUN steps reach the Debian mirror even on a daemon without a bridge.
build=(docker build --network host)
if [ "$servers_only" -eq 1 ]; then
  "${build[@]}" -f docker/Dockerfile --target servers -t "$tag-servers" .
elif [ -z "$prebuilt" ]; then
  "${build[@]}" -f docker/Dockerfile -t "$tag" .
else
  for f in fencecheck libfcclock.so fclazydisk; do
    [ -f "$prebuilt/harness/$f" ] || { echo "docker/build.sh: $prebuilt/harness/$f is missing" \
      "(run scripts/build.sh fencecheck)" >&2; exit 3; }
  done
  "${build[@]}" -f docker/Dockerfile --target servers -t "$tag-servers" .
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  cp "$prebuilt/harness/fencecheck" "$prebuilt/harness/libfcclock.so" "$prebuilt/harness/fclazydisk" "$context/"
  # The Dockerfile's last stage, with the host's binaries in place of the build stage's.
  printf 'FROM %s\nCOPY fencecheck libfcclock.so fclazydisk /opt/fencecheck/bin/\n' "$tag-servers" |
    docker build -t "$tag" -f - "$context"
fi
say "built image $tag in $(( $(date +%s) - started )) s"
