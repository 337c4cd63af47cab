#!/usr/bin/python3
"""What a Kubernetes Job controller would create from `fencecheck suite k8s-job`'s output,
for `podman kube play`, which (4.3) has no Job kind: the ConfigMap as it is (its text as
fencecheck wrote it, so that podman's Go YAML reader reads fencecheck's YAML), and the Job's
pod template as a Pod per index, with JOB_COMPLETION_INDEX set in each container as the
Indexed Job controller sets it. The PersistentVolumeClaim is left out: podman makes a named
volume for a claim it does not know.

    job_pods.py MANIFESTS JOB_NAME [INDEX ...]   (no INDEX: every index of an Indexed Job)

Prints the YAML documents; exits 2 naming what is missing."""
import copy
import sys

import yaml


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: job_pods.py MANIFESTS JOB_NAME [INDEX ...]")
    with open(argv[1]) as f:
        text = f.read()
    chunks = []  # (document, its text)
    for chunk in ("\n" + text).split("\n---\n"):
        doc = yaml.safe_load(chunk)
        if doc:
            chunks.append((doc, chunk.strip("\n") + "\n"))
    docs = [d for d, _ in chunks]
    jobs = [d for d in docs if d.get("kind") == "Job" and d["metadata"]["name"] == argv[2]]
    if not jobs:
        sys.exit(f"{argv[1]}: no Job named {argv[2]}")
    job = jobs[0]
    spec = job["spec"]
    indexed = spec.get("completionMode") == "Indexed"
    indices = [int(i) for i in argv[3:]] or (list(range(spec["completions"])) if indexed else [None])
    config_maps = [t for d, t in chunks if d.get("kind") == "ConfigMap"]
    out = []
    for index in indices:
        template = copy.deepcopy(spec["template"])
        name = argv[2] + ("" if index is None else f"-{index}")
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "labels": template.get("metadata", {}).get("labels", {})},
               "spec": template["spec"]}
        if index is not None:
            for c in pod["spec"]["containers"]:
                c.setdefault("env", []).append({"name": "JOB_COMPLETION_INDEX", "value": str(index)})
        out.append(pod)
    sys.stdout.write("---\n".join(config_maps))
    for pod in out:
        sys.stdout.write("---\n" + yaml.safe_dump(pod, sort_keys=False, allow_unicode=True))


if __name__ == "__main__":
    main(sys.argv)
