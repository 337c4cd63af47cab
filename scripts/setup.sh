#!/usr/bin/env bash
# Installs every Debian package fencecheck needs to build, test and run its servers.
# Idempotent: installs only what is missing, and runs `apt-get update` only then.
# Works as root or through sudo. Starts no daemon: the harness starts every server itself.
set -euo pipefail

# Package groups. The default installs build, servers and tests (a developer's machine,
# CI); docker/Dockerfile installs `--image` (servers and the libraries the built
# fencecheck loads) and, for a build from source inside the image, `--build`.
build=(
  # toolchain
  g++ cmake make pkg-config clang libclang-rt-14-dev
  # libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libsimdjson-dev libboost-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  libhiredis-dev libzookeeper-mt-dev libpq-dev libmariadb-dev libnats-dev
  # etcd's API protos (proto/etcd/CMakeLists.txt generates the C++ client from them) and
  # the gogo/googleapis protos they import
  golang-etcd-server-dev golang-github-gogo-protobuf-dev golang-github-gogo-googleapis-dev
  # fclazydisk (nemesis/disk/), the FUSE file system whose crash loses unsynced writes
  libfuse3-dev
)
servers=(
  # servers under test: every debian_package of BackendInfo::binaries (backends/*_backend.cpp)
  # must be here; backend_registry_test checks it
  redis-server zookeeper default-jre-headless postgresql etcd-server mariadb-server memcached nats-server
  # cluster=galera of the mariadb backend: the wsrep provider mariadbd loads (rsync, its SST, comes with mariadb-server)
  galera-4 rsync
  # fault injection
  iptables iproute2 procps psmisc
  # fclazydisk's mounts: fusermount3 (a lazy unmount after its crash) and /etc/fuse.conf
  fuse3
)
runtime_libs=(
  # what a built fencecheck loads (ldd), without the -dev packages: the image's runtime
  libgrpc++1.51 libprotobuf32 libhiredis0.14 libzookeeper-mt2 libpq5 libmariadb3 libsimdjson14 libnats3.4
  # what fclazydisk loads
  libfuse3-3
)
# The lock libraries' adapters (adapters/): their interpreters and Debian-packaged
# libraries (javac compiles the Curator adapter at build time). Their npm packages are
# installed below from each adapter's lockfile.
adapters=(
  nodejs python3-redis libcurator-recipes-java default-jdk-headless
  # tooz (and the drivers it needs that it does not pull in) and kazoo
  python3-tooz python3-kazoo python3-psycopg2 python3-pymysql python3-pymemcache python3-etcd3gw
)
tests=(
  # report tests: JUnit schema validation, report.html in a headless browser
  libxml2-utils chromium
  # the docker runtime and docker/build.sh: dockerd, a Debian base image made locally
  docker.io docker-compose debootstrap
  # the ssh runtime's test fixture, scripts/ssh-test-hosts.sh: an sshd per network namespace, reached through nc
  openssh-server openssh-client netcat-openbsd
  # `suite k8s-job`: the manifests checked against the Kubernetes API models, and the pods
  # run under `podman kube play` (catatonit: its pod's pause process; runc: its runtime)
  python3-kubernetes python3-yaml podman catatonit runc
)

case "${1:-}" in
  "") packages=("${build[@]}" "${servers[@]}" "${adapters[@]}" "${tests[@]}") ;;
  --image) packages=("${servers[@]}" "${runtime_libs[@]}") ;;
  --build) packages=("${build[@]}") ;;
  *) echo "usage: setup.sh [--image | --build]" >&2; exit 2 ;;
esac

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "setup.sh: must run as root or with sudo available" >&2
  exit 1
fi

install_packages() {
  missing=()
  for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done

  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup.sh: all ${#packages[@]} packages already installed"
    return 0
  fi

  echo "setup.sh: installing ${#missing[@]} missing package(s): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${as_root[@]}" apt-get update -q; then
    echo "setup.sh: apt-get update failed; is the Debian archive reachable?" >&2
    return 1
  fi
  # policy-rc.d 101 keeps package scripts from starting daemons (redis, postgres, zookeeper).
  policy=/usr/sbin/policy-rc.d
  added_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
    "${as_root[@]}" chmod 755 "$policy"
    added_policy=1
  fi
  status=0
  "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" || status=$?
  [ "$added_policy" -eq 1 ] && "${as_root[@]}" rm -f "$policy"
  if [ "$status" -ne 0 ]; then
    echo "setup.sh: apt-get install failed (exit $status) for: ${missing[*]}" >&2
    return "$status"
  fi

  still=()
  for p in "${missing[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || still+=("$p")
  done
  if [ ${#still[@]} -ne 0 ]; then
    echo "setup.sh: still missing after install: ${still[*]}" >&2
    return 1
  fi
}

# npm packages of the Node adapters, exactly as each adapter's lockfile pins them, into
# adapters/<name>/node_modules (the build copies them beside fencecheck). Skipped when an
# adapter's node_modules is newer than its lockfile.
install_adapter_npm_packages() {
  local here lock dir
  here=$(cd "$(dirname "$0")/.." && pwd)
  if ! command -v npm >/dev/null 2>&1; then
    "${as_root[@]}" apt-get install -y -q --no-install-recommends npm || return 1
  fi
  for lock in "$here"/adapters/*/package-lock.json; do
    [ -e "$lock" ] || continue
    dir=$(dirname "$lock")
    if [ -d "$dir/node_modules" ] && [ "$dir/node_modules" -nt "$lock" ]; then continue; fi
    echo "setup.sh: npm ci in ${dir#"$here"/}"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || {
      echo "setup.sh: npm ci failed in $dir; is the npm registry reachable?" >&2
      return 1
    }
    touch "$dir/node_modules"
  done
}

install_packages
if [ -z "${1:-}" ]; then install_adapter_npm_packages; fi
echo "setup.sh: done"
