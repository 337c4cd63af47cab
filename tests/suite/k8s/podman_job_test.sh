#!/usr/bin/env bash
# `fencecheck suite k8s-job`'s pod templates, run under `podman kube play` against the
# fencecheck image (docker/, from the test dockerd): what an Indexed Job's pods would do,
# short of the Job controller itself, which needs a Kubernetes server this machine lacks.
#
#   podman_job_test.sh FENCECHECK_BIN   (DOCKER_HOST: the dockerd holding image `fencecheck`)
#
# A plan of two rows; each row's pod is the Job's template with JOB_COMPLETION_INDEX set
# (tests/suite/k8s/job_pods.py). Checks: both pods exit 0, each stored its own row in the
# shared store volume, an index past the plan exits 4 (what the Job's podFailurePolicy
# fails the index on), and the collect Job's pod merges the rows (suite.md, junit.xml).
# Podman runs with its own storage under a temporary directory, no network (each pod has
# only its loopback, where the rows' servers listen), and removes everything on exit.
# Exit 77 (ctest: skipped) when podman is missing, unless $CI is set.
set -euo pipefail
fencecheck=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "podman_job_test: FAIL: $*" >&2; exit 1; }
if ! command -v podman >/dev/null || ! /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
  [ -n "${CI:-}" ] && fail "podman or python3-yaml is missing (scripts/setup.sh installs them)"
  echo "podman_job_test: podman or python3-yaml is missing: skipped"; exit 77
fi
work=$(mktemp -d /var/tmp/fc-podman-test.XXXXXX)
# Podman keeps a blob cache in /var/lib/containers whatever --root says: removed on exit
# when this test made it.
leftovers=()
[ -e /var/lib/containers ] || leftovers+=(/var/lib/containers)
mkdir -p "$work/net" "$work/tmp"
# Everything podman keeps goes under $work: its storage, run state, temporary files and
# network configuration (so that nothing it does touches /etc/cni/net.d's other networks).
pm=(podman --root "$work/root" --runroot "$work/runroot" --tmpdir "$work/tmp" --network-config-dir "$work/net"
    --runtime runc --cgroup-manager cgroupfs)
cleanup() {
  "${pm[@]}" pod rm -af -t 1 >/dev/null 2>&1 || true
  "${pm[@]}" volume rm -af >/dev/null 2>&1 || true
  "${pm[@]}" rmi -af >/dev/null 2>&1 || true
  awk -v w="$work" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l
  rm -rf "$work" "${leftovers[@]}"
}
trap cleanup EXIT
# Podman gives a container its own rlimits (nofile 1048576 by default, nproc as high); this
# machine refuses a container raising either, so they are set at what the host allows.
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=4096:4096"]\n' "$(ulimit -Hn)" "$(ulimit -Hn)" \
  >"$work/containers.conf"
export CONTAINERS_CONF="$work/containers.conf"
cd "$work"

"$fencecheck" suite plan matrix --backends redis --faults none,pause-holder --time-limit 5 >plan.jsonl
[ "$(wc -l <plan.jsonl)" -eq 2 ] || fail "expected a plan of 2 rows: $(cat plan.jsonl)"
"$fencecheck" suite k8s-job --plan plan.jsonl --image localhost/fencecheck:latest --parallelism 2 --name fc-test \
  --store-path suite-matrix/podman >job.yaml
started=$SECONDS
docker save fencecheck | "${pm[@]}" load -q >/dev/null || fail "docker save fencecheck | podman load"
echo "podman_job_test: image loaded into podman in $((SECONDS - started)) s"

# Plays the pods of `job` (indices: all of an Indexed Job's, or those given) and waits for
# their containers; prints "<pod> <exit code>" lines.
play() {
  local job=$1 container=$2
  shift 2
  /usr/bin/python3 "$here/job_pods.py" job.yaml "$job" "$@" >"$job.yaml"
  "${pm[@]}" kube play --network none "$job.yaml" >/dev/null || fail "podman kube play $job.yaml"
  for pod in $(/usr/bin/python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d["kind"] == "Pod": print(d["metadata"]["name"])' "$job.yaml"); do
    echo "$pod $("${pm[@]}" wait "$pod-$container")"
  done
}
started=$SECONDS
play fc-test-rows row >rows.out
cat rows.out
echo "podman_job_test: 2 row pods ran in $((SECONDS - started)) s"
while read -r pod code; do
  [ "$code" = 0 ] || fail "$pod exited $code: $("${pm[@]}" logs "$pod-row" 2>&1 | tail -5)"
done <rows.out
store=$("${pm[@]}" volume inspect fc-test-store --format '{{.Mountpoint}}')/suite-matrix/podman
for id in $(/usr/bin/python3 -c 'import json,sys; [print(json.loads(l)["id"]) for l in open("plan.jsonl")]'); do
  [ -f "$store/rows/$id/row.json" ] || fail "row $id was not stored: $(ls -R "$store" | head -20)"
done
# shareProcessNamespace: the pod's pause process, not fencecheck, is pid 1 (it reaps orphans).
"${pm[@]}" pod inspect fc-test-rows-0 --format '{{.SharedNamespaces}}' | grep -qw pid ||
  fail "the row pod does not share its process namespace: $("${pm[@]}" pod inspect fc-test-rows-0 \
    --format '{{.SharedNamespaces}}')"
# Each pod ran the row its index names: pod i's log names case i of the plan.
for i in 0 1; do
  case_id=$(/usr/bin/python3 -c "import json; print(json.loads(open('plan.jsonl').readlines()[$i])['case'])")
  "${pm[@]}" logs "fc-test-rows-$i-row" 2>&1 | grep -q "^\[$case_id 1\]" ||
    fail "pod $i did not run $case_id: $("${pm[@]}" logs "fc-test-rows-$i-row" 2>&1 | tail -3)"
done

# An index the plan does not have: exit 4, which the Job's podFailurePolicy fails at once.
"${pm[@]}" pod rm -af -t 1 >/dev/null
play fc-test-rows row 7 >bad.out
read -r _ code <bad.out
[ "$code" = 4 ] || fail "an index past the plan exited $code, not 4"

play fc-test-collect collect >collect.out
read -r _ code <collect.out
"${pm[@]}" logs fc-test-collect-collect >collect.log 2>&1 || true
# It exits as the suite would: 0, or 1 when a run found a violation (pause-holder may well
# on redis); 3 would mean rows missing, duplicated or foreign.
case "$code" in 0 | 1) ;; *) fail "the collect pod exited $code: $(tail -20 collect.log)" ;; esac
for f in suite.md suite.json junit.xml; do [ -s "$store/$f" ] || fail "the collect pod wrote no $f"; done
for c in "redis × none" "redis × pause-holder"; do
  grep -q "| $c |" "$store/suite.md" || fail "suite.md lacks $c: $(head -20 "$store/suite.md")"
done
! grep -q "harness error" "$store/suite.md" || fail "a row's bench failed: $(cat "$store/suite.md")"
echo "podman_job_test: ok (rows stored: $(ls "$store/rows" | tr '\n' ' '))"
