#!/usr/bin/env bash
# `fencecheck suite k8s-job`'s manifests against the Kubernetes API schema
# (check_manifest.py: python3-kubernetes' models, and the newer Job fields by hand), the
# schema check's own mutations, the options' errors, run-row's exit codes that the Job's
# podFailurePolicy relies on, and docs/ci/kubernetes-job.yaml still being what the
# command prints.
#
#   manifest_test.sh FENCECHECK_BIN SOURCE_DIR
#
# Exit 77 (ctest: skipped) when python3-kubernetes is missing, unless $CI is set.
set -euo pipefail
fencecheck=$(realpath "$1")
source_dir=$(realpath "$2")
check="$source_dir/tests/suite/k8s/check_manifest.py"
fail() { echo "manifest_test: FAIL: $*" >&2; exit 1; }
if ! /usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null; then
  [ -n "${CI:-}" ] && fail "python3-kubernetes is missing (scripts/setup.sh installs it)"
  echo "manifest_test: python3-kubernetes is missing: skipped"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$fencecheck" suite plan kleppmann --repeat 2 >plan.jsonl
rows=$(wc -l <plan.jsonl)
"$fencecheck" suite k8s-job --plan plan.jsonl --image registry.example/fencecheck:0.1 --parallelism 8 >made.yaml
/usr/bin/python3 "$check" made.yaml || fail "the manifests with their own claim are refused"
/usr/bin/python3 "$check" --self-test made.yaml || fail "the schema check let a broken manifest through"
grep -q "^  completions: $rows\$" made.yaml || fail "completions is not the plan's $rows rows"
# The ConfigMap carries plan.jsonl byte for byte; both Jobs use one fresh store path.
/usr/bin/python3 - made.yaml plan.jsonl <<'PY' || fail "the manifests do not carry the plan or the store path"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
plan = next(d for d in docs if d["kind"] == "ConfigMap")["data"]["plan.jsonl"]
assert plan == open(sys.argv[2]).read(), "the ConfigMap's plan differs from plan.jsonl"
stores = set()
for job in (d for d in docs if d["kind"] == "Job"):
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    stores.add(args[args.index("--store") + 1])
assert len(stores) == 1 and next(iter(stores)).startswith("/store/suite-kleppmann/"), stores
PY
"$fencecheck" suite k8s-job --plan plan.jsonl --image fc --parallelism 8 >again.yaml
store_of() { grep -m1 -A1 -- '- "--store"' "$1" | tail -1; }
[ "$(store_of made.yaml)" != "$(store_of again.yaml)" ] ||
  fail "two invocations share a store path, so the second would find every row stored: $(store_of again.yaml)"
"$fencecheck" suite k8s-job --plan plan.jsonl --image fc --parallelism 2 --pvc nightly-store --name nightly \
  --retries 0 >claim.yaml
/usr/bin/python3 "$check" claim.yaml || fail "the manifests on an existing claim are refused"
! grep -q "kind: \"PersistentVolumeClaim\"" claim.yaml || fail "--pvc given, yet a claim is made"
grep -q "claimName: \"nightly-store\"" claim.yaml || fail "--pvc is not the store's claim"

# Bad options and a bad plan: exit 3, naming the option, or the file and line.
expect_error() {
  local what=$1 text=$2 code=0
  shift 2
  out=$("$fencecheck" suite k8s-job "$@" 2>&1) || code=$?
  [ "$code" = 3 ] || fail "$what: exit $code, not 3: $out"
  grep -q -- "$text" <<<"$out" || fail "$what: the error does not say \"$text\": $out"
}
ok=(--plan plan.jsonl --image fc --parallelism 1)
expect_error "a name with capitals" "--name \"Nightly\"" "${ok[@]}" --name Nightly
expect_error "a name over 40 characters" "at most 40" "${ok[@]}" --name "$(printf 'n%.0s' {1..41})"
expect_error "a claim that is no object name" "--pvc \"Bad_Claim\"" "${ok[@]}" --pvc Bad_Claim
expect_error "a size that is no quantity" "--storage \"lots\"" "${ok[@]}" --storage lots
expect_error "a size of zero" "--storage \"0Gi\"" "${ok[@]}" --storage 0Gi
expect_error "a store path that climbs out" "--store-path" "${ok[@]}" --store-path ../elsewhere
expect_error "an absolute store path" "--store-path" "${ok[@]}" --store-path /store
expect_error "no parallelism" "--parallelism" --plan plan.jsonl --image fc
sed '2s/"seed":[0-9]*/"seed":7/' plan.jsonl >edited.jsonl
expect_error "an edited plan line" "edited.jsonl:2" --plan edited.jsonl --image fc --parallelism 1
"$fencecheck" suite plan kleppmann --repeat 100 >long.jsonl
expect_error "a plan over a ConfigMap's 1 MiB" "do not fit a ConfigMap" --plan long.jsonl --image fc --parallelism 1
"$fencecheck" suite k8s-job "${ok[@]}" --storage 1.5e9 --storage-class nfs-client --row-deadline 600 >sized.yaml ||
  fail "a quantity with an exponent, a storage class or a deadline was refused"
/usr/bin/python3 "$check" sized.yaml || fail "the manifests with a storage class and a deadline are refused"
grep -q "storageClassName: \"nfs-client\"" sized.yaml || fail "--storage-class is not the claim's class"
grep -q "activeDeadlineSeconds: 600" sized.yaml || fail "--row-deadline is not the row pods' deadline"

# A plan no run would accept is refused before any row exists, naming each case.
if out=$("$fencecheck" suite plan matrix --backends redis --faults none,pause-holder --time-limit 3 2>&1); then
  fail "a plan whose pause outlasts its runs was made"
fi
grep -q "redis-pause-holder: --pause-ms (3000 ms) must be shorter than --time-limit" <<<"$out" ||
  fail "the refused plan does not name its case: $out"

# The exit codes the Job retries (3, a killed pod) and fails at once (anything else, 4).
grep -q -- "- 3\$" made.yaml || fail "exit 3 is not among the retried codes"
set +e
JOB_COMPLETION_INDEX=$rows "$fencecheck" suite run-row --plan plan.jsonl --store store >/dev/null 2>&1
past=$?
JOB_COMPLETION_INDEX=first "$fencecheck" suite run-row --plan plan.jsonl --store store >/dev/null 2>&1
garbled=$?
"$fencecheck" suite run-row --plan plan.jsonl --index 0 >/dev/null 2>&1
no_store=$?
"$fencecheck" suite plan kleppmann --bogus >/dev/null 2>&1
other=$?
set -e
[ "$past" = 4 ] || fail "run-row at an index past the plan exited $past, not 4"
[ "$garbled" = 4 ] || fail "run-row with JOB_COMPLETION_INDEX=first exited $garbled, not 4"
[ "$no_store" = 4 ] || fail "run-row without --store exited $no_store, not 4"
[ "$other" = 3 ] || fail "another command's usage error exited $other, not 3"

# The documented example is what the command prints today.
"$fencecheck" suite plan kleppmann --only K1,K2 >example.jsonl
"$fencecheck" suite k8s-job --plan example.jsonl --image registry.example/fencecheck:0.1 --parallelism 2 \
  --store-path suite-kleppmann/example >example.yaml
diff -u "$source_dir/docs/ci/kubernetes-job.yaml" example.yaml ||
  fail "docs/ci/kubernetes-job.yaml is stale: regenerate it with the two commands above"
echo "manifest_test: ok ($rows rows)"
