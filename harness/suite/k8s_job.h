// `fencecheck suite k8s-job`: a suite's plan as Kubernetes manifests (issue 34). The rows
// run as an Indexed Job, one pod per row (JOB_COMPLETION_INDEX is run-row's --index), and
// share one store on a ReadWriteMany volume; a second Job, created suspended, collects
// them once the first has completed:
//
//   fencecheck suite plan kleppmann > plan.jsonl
//   fencecheck suite k8s-job --plan plan.jsonl --image IMAGE --parallelism 8 | kubectl create -f -
//   (wait until NAME-rows is Complete or Failed, then unsuspend NAME-collect: the header
//   of the output has the commands)
//
// What the manifests say, and why:
// - completions = the plan's rows; completionMode Indexed; backoffLimitPerIndex retries a
//   row on its own;
// - podFailurePolicy: exit 3 (the bench failed: run-row stored no verdict) and a pod killed
//   by a signal (137, 143: out of memory, eviction) are retried; any other failure (4: the
//   plan or index cannot be used) fails that index at once, since a rerun cannot help;
//   a disruption (preemption, a drained node) is not counted at all;
// - the pod is privileged (network namespaces, iptables, the clock library, FUSE), so its
//   namespace must allow privileged pods (Pod Security "privileged"); it shares one process
//   namespace, so that the pause process, not fencecheck, is pid 1 and reaps orphans;
// - the plan travels in a ConfigMap (1 MiB at most: a larger plan is refused here, with
//   the size) mounted read-only at /plan; the store is a PersistentVolumeClaim at /store,
//   --pvc's or one made here (ReadWriteMany, --storage), the suite in its --store-path;
// - a row pod has a deadline (activeDeadlineSeconds), so that a hung row is retried rather
//   than holding the suite forever.
//
// Pure functions; thread-safe. Errors: std::invalid_argument naming the option.
#pragma once

#include <string>
#include <vector>

#include "harness/suite/suite_plan.h"

namespace fencecheck {

struct K8sJobOptions {
  std::string image;         // the fencecheck image (docker/), as the cluster pulls it
  int parallelism = 1;       // pods at once
  std::string name;          // prefix of every object's name; default "fencecheck-<suite>"
  // The suite's directory inside the volume, relative: "suite-kleppmann/20261204T…Z" (the
  // command stamps it), so that a claim kept from night to night starts each suite afresh
  // instead of finding every row of the same plan stored already.
  std::string store_path;
  std::string pvc;           // an existing claim for the store; empty: the manifests make NAME-store
  std::string storage = "20Gi";  // the size of the claim made here
  std::string storage_class;     // its class (ReadWriteMany); empty: the cluster's default
  int retries = 2;           // backoffLimitPerIndex: reruns of a row whose bench failed
  int row_deadline_s = 0;    // a row pod's activeDeadlineSeconds; 0: from the plan's time limits
};

// A row pod's deadline when none is given: twice the plan's longest --time-limit plus 900 s
// for setup, checks and teardown. A pod past it is killed (exit 137) and retried.
int default_row_deadline_s(const std::vector<PlanRow>& plan);

// The exit codes of `suite run-row` a Job retries: 3 and a pod killed by SIGKILL or SIGTERM.
inline const std::vector<int>& k8s_retried_exit_codes() {
  static const std::vector<int> codes{3, 137, 143};
  return codes;
}

// The manifests, as YAML documents separated by "---", preceded by comment lines saying how
// to apply, wait for and collect them. `plan` is what `plan_file_text` (plan.jsonl) holds.
std::string k8s_job_manifests(const std::vector<PlanRow>& plan, const std::string& plan_file_text,
                              const K8sJobOptions& options);

}  // namespace fencecheck
