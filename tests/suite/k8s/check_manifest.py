#!/usr/bin/python3
"""Checks Kubernetes manifests (YAML documents) against the API schema as Debian's
python3-kubernetes 22.6.0 carries it: its models are the OpenAPI definitions of Kubernetes
1.22, a class per definition with each field's JSON name and type. Every field of every
object is looked up there (an unknown field or a wrong type is a problem) and every field
whose setter refuses None is required.

The models predate what an Indexed Job of today uses, so these are checked here by hand,
by the rules of the current API reference (batch/v1, Kubernetes 1.33) written out below:
JobSpec.backoffLimitPerIndex (1.28+) and JobSpec.podFailurePolicy (1.25+) with its rules;
the enumerations the models do not check (restartPolicy, completionMode, imagePullPolicy,
accessModes); object names; every volumeMount naming a volume. Other JobSpec fields newer
than the models (maxFailedIndexes, podReplacementPolicy, successPolicy, managedBy) are
reported as unchecked, never passed silently.

    check_manifest.py FILE              exit 0: valid; 1: problems, one per line
    check_manifest.py --self-test FILE  FILE must be valid, and each mutation in MUTATIONS
                                        of its first Job must be refused
"""
import copy
import re
import sys

import kubernetes
import yaml
from kubernetes.client import models
from kubernetes.client.configuration import Configuration

NEWER_JOB_FIELDS = {"backoffLimitPerIndex", "podFailurePolicy"}
UNCHECKED_JOB_FIELDS = {"maxFailedIndexes", "podReplacementPolicy", "successPolicy", "managedBy"}
ENUMS = {
    ("V1PodSpec", "restartPolicy"): {"Always", "OnFailure", "Never"},
    ("V1JobSpec", "completionMode"): {"NonIndexed", "Indexed"},
    ("V1Container", "imagePullPolicy"): {"Always", "Never", "IfNotPresent"},
}
ACCESS_MODES = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-.a-z0-9]*[a-z0-9])?$")


def required_fields(klass):
    """The JSON names of the fields a model's setter refuses to leave empty."""
    obj = klass.__new__(klass)
    obj.local_vars_configuration = Configuration()
    required = set()
    for attr in klass.openapi_types:
        try:
            setattr(obj, attr, None)
        except ValueError:
            required.add(klass.attribute_map[attr])
    return required


def check_value(value, type_name, path, problems):
    if type_name == "object":
        return
    if type_name.startswith("list["):
        if not isinstance(value, list):
            problems.append(f"{path}: a list expected, got {value!r}")
            return
        for i, item in enumerate(value):
            check_value(item, type_name[5:-1], f"{path}[{i}]", problems)
        return
    if type_name.startswith("dict("):
        if not isinstance(value, dict):
            problems.append(f"{path}: a map expected, got {value!r}")
            return
        inner = re.match(r"dict\(([^,]*), (.*)\)", type_name).group(2)
        for k, item in value.items():
            check_value(item, inner, f"{path}.{k}", problems)
        return
    primitive = {"str": str, "int": int, "bool": bool, "float": (int, float)}.get(type_name)
    if primitive is not None:
        if not isinstance(value, primitive) or (type_name == "int" and isinstance(value, bool)):
            problems.append(f"{path}: {type_name} expected, got {value!r}")
        return
    check_model(value, type_name, path, problems)


def check_model(value, model_name, path, problems):
    klass = getattr(models, model_name, None)
    if klass is None:
        problems.append(f"{path}: the models have no {model_name}")
        return
    if not isinstance(value, dict):
        problems.append(f"{path}: an object ({model_name}) expected, got {value!r}")
        return
    by_json = {j: a for a, j in klass.attribute_map.items()}
    for key, item in value.items():
        here = f"{path}.{key}"
        if model_name == "V1JobSpec" and key in NEWER_JOB_FIELDS:
            continue  # check_job_by_hand
        if model_name == "V1JobSpec" and key in UNCHECKED_JOB_FIELDS:
            problems.append(f"{here}: newer than the models and not checked here")
            continue
        if key not in by_json:
            problems.append(f"{here}: not a field of {model_name}")
            continue
        allowed = ENUMS.get((model_name, key))
        if allowed is not None and item not in allowed:
            problems.append(f"{here}: {item!r} is not one of {sorted(allowed)}")
        check_value(item, klass.openapi_types[by_json[key]], here, problems)
    for key in sorted(required_fields(klass) - set(value)):
        problems.append(f"{path}: required field {key} is missing")


def check_job_by_hand(job, path, problems):
    spec = job.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = {c.get("name") for c in pod.get("containers") or []}
    containers |= {c.get("name") for c in pod.get("initContainers") or []}
    indexed = spec.get("completionMode") == "Indexed"
    if indexed and "completions" not in spec:
        problems.append(f"{path}.spec: an Indexed Job needs completions")
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        problems.append(f"{path}.spec.template.spec.restartPolicy: a Job's pods must be Never or OnFailure")
    per_index = spec.get("backoffLimitPerIndex")
    if per_index is not None:
        if not isinstance(per_index, int) or isinstance(per_index, bool) or per_index < 0:
            problems.append(f"{path}.spec.backoffLimitPerIndex: a non-negative int expected, got {per_index!r}")
        if not indexed:
            problems.append(f"{path}.spec.backoffLimitPerIndex: only for completionMode Indexed")
    policy = spec.get("podFailurePolicy")
    if policy is None:
        return
    here = f"{path}.spec.podFailurePolicy"
    if pod.get("restartPolicy") != "Never":
        problems.append(f"{here}: needs the template's restartPolicy Never")
    if not isinstance(policy, dict) or set(policy) != {"rules"} or not isinstance(policy["rules"], list):
        problems.append(f"{here}: exactly a list of rules expected, got {policy!r}")
        return
    if len(policy["rules"]) > 20:
        problems.append(f"{here}.rules: at most 20 rules")
    for i, rule in enumerate(policy["rules"]):
        check_rule(rule, f"{here}.rules[{i}]", containers, per_index is not None, problems)


def check_rule(rule, here, containers, per_index, problems):
    if not isinstance(rule, dict):
        problems.append(f"{here}: an object expected")
        return
    for key in set(rule) - {"action", "onExitCodes", "onPodConditions"}:
        problems.append(f"{here}.{key}: not a field of PodFailurePolicyRule")
    action = rule.get("action")
    if action not in ("FailJob", "FailIndex", "Ignore", "Count"):
        problems.append(f"{here}.action: {action!r} is not FailJob, FailIndex, Ignore or Count")
    if action == "FailIndex" and not per_index:
        problems.append(f"{here}.action: FailIndex needs backoffLimitPerIndex")
    if ("onExitCodes" in rule) == ("onPodConditions" in rule):
        problems.append(f"{here}: exactly one of onExitCodes and onPodConditions")
    codes = rule.get("onExitCodes")
    if codes is not None:
        for key in set(codes) - {"containerName", "operator", "values"}:
            problems.append(f"{here}.onExitCodes.{key}: not a field of PodFailurePolicyOnExitCodesRequirement")
        if "containerName" in codes and codes["containerName"] not in containers:
            problems.append(f"{here}.onExitCodes.containerName: {codes['containerName']!r} is no container of the pod")
        if codes.get("operator") not in ("In", "NotIn"):
            problems.append(f"{here}.onExitCodes.operator: {codes.get('operator')!r} is not In or NotIn")
        values = codes.get("values")
        if (not isinstance(values, list) or not 1 <= len(values) <= 255
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)):
            problems.append(f"{here}.onExitCodes.values: 1 to 255 ints expected, got {values!r}")
        elif values != sorted(set(values)):
            problems.append(f"{here}.onExitCodes.values: must be ordered and without duplicates: {values}")
        elif codes.get("operator") == "In" and 0 in values:
            problems.append(f"{here}.onExitCodes.values: 0 cannot be used with In")
    for j, pattern in enumerate(rule.get("onPodConditions") or []):
        there = f"{here}.onPodConditions[{j}]"
        if not isinstance(pattern, dict) or not isinstance(pattern.get("type"), str):
            problems.append(f"{there}: a type (string) is required")
        elif pattern.get("status", "True") not in ("True", "False", "Unknown"):
            problems.append(f"{there}.status: {pattern['status']!r} is not True, False or Unknown")


def check_pod_spec_references(pod, path, problems):
    volumes = {v.get("name") for v in pod.get("volumes") or [] if isinstance(v, dict)}
    for i, c in enumerate(pod.get("containers") or []):
        for j, m in enumerate((c or {}).get("volumeMounts") or []):
            if isinstance(m, dict) and m.get("name") not in volumes:
                problems.append(f"{path}.containers[{i}].volumeMounts[{j}].name: {m.get('name')!r} is no volume")


def check_document(doc, where, problems):
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or "apiVersion" not in doc:
        problems.append(f"{where}: kind and apiVersion are required")
        return
    version = str(doc["apiVersion"]).split("/")[-1]
    model = version[0].upper() + version[1:] + doc["kind"]
    name = (doc.get("metadata") or {}).get("name", "")
    path = f"{where} ({doc['kind']} {name})"
    before = len(problems)
    check_model(doc, model, path, problems)
    pattern = DNS_LABEL if doc["kind"] == "Job" else DNS_SUBDOMAIN
    if not isinstance(name, str) or not pattern.match(name) or len(name) > (63 if doc["kind"] == "Job" else 253):
        problems.append(f"{path}.metadata.name: {name!r} is not a valid name for a {doc['kind']}")
    if doc["kind"] == "Job":
        check_job_by_hand(doc, path, problems)
        check_pod_spec_references(((doc.get("spec") or {}).get("template") or {}).get("spec") or {},
                                  f"{path}.spec.template.spec", problems)
    if doc["kind"] == "PersistentVolumeClaim":
        for mode in (doc.get("spec") or {}).get("accessModes") or []:
            if mode not in ACCESS_MODES:
                problems.append(f"{path}.spec.accessModes: {mode!r} is not one of {sorted(ACCESS_MODES)}")
    return len(problems) == before


def check_documents(docs, label):
    problems = []
    for n, doc in enumerate(docs, 1):
        check_document(doc, f"{label}: document {n}", problems)
    return problems


def spec_of_first_job(docs):
    return next(d for d in docs if d.get("kind") == "Job")["spec"]


def set_path(spec, path, value):
    *parents, last = path
    for p in parents:
        spec = spec[p]
    if value is DELETE:
        del spec[last]
    else:
        spec[last] = value


DELETE = object()
CONTAINER = ["template", "spec", "containers", 0]
RULES = ["podFailurePolicy", "rules"]
# What a schema check must refuse, each a change to the first Job's spec.
MUTATIONS = [
    ("an unknown container field", CONTAINER + ["imagePullPolcy"], "Always"),
    ("completions as a string", ["completions"], "3"),
    ("a container without a name", CONTAINER + ["name"], DELETE),
    ("restartPolicy Sometimes", ["template", "spec", "restartPolicy"], "Sometimes"),
    ("an unknown rule action", RULES + [1, "action"], "Retry"),
    ("exit codes out of order", RULES + [1, "onExitCodes", "values"], [143, 3]),
    ("exit code 0 with In", RULES + [1, "onExitCodes"], {"operator": "In", "values": [0, 4]}),
    ("a rule on a container the pod lacks", RULES + [1, "onExitCodes", "containerName"], "other"),
    ("restartPolicy OnFailure under a podFailurePolicy", ["template", "spec", "restartPolicy"], "OnFailure"),
    ("backoffLimitPerIndex on a NonIndexed Job", ["completionMode"], "NonIndexed"),
    ("FailIndex without backoffLimitPerIndex", ["backoffLimitPerIndex"], DELETE),
    ("a mount of no volume", CONTAINER + ["volumeMounts", 0, "name"], "nothing"),
    ("an unchecked newer field", ["maxFailedIndexes"], 3),
]


def self_test(docs, label):
    failures = []
    problems = check_documents(docs, label)
    if problems:
        failures.append("the manifest itself is refused: " + "; ".join(problems))
    for what, path, value in MUTATIONS:
        mutated = copy.deepcopy(docs)
        set_path(spec_of_first_job(mutated), path, value)
        refused = check_documents(mutated, label)
        if not refused:
            failures.append(f"not refused: {what}")
        else:
            print(f"check_manifest --self-test: {what}: {refused[0]}")
    for f in failures:
        print(f"check_manifest --self-test: {f}")
    if not failures:
        print(f"check_manifest --self-test: the manifest passes; all {len(MUTATIONS)} mutations are refused")
    return 1 if failures else 0


def main(argv):
    test = len(argv) == 3 and argv[1] == "--self-test"
    if len(argv) != 2 and not test:
        sys.exit("usage: check_manifest.py [--self-test] FILE")
    label = argv[-1]
    try:
        with open(label) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        print(f"{label}: {e}")
        return 1
    if test:
        return self_test(docs, label)
    problems = check_documents(docs, label)
    for p in problems:
        print(p)
    if not problems:
        kinds = ", ".join(f"{d['kind']} {d['metadata']['name']}" for d in docs)
        print(f"{label}: valid against python3-kubernetes {kubernetes.__version__} "
              f"models ({kinds}); checked by hand: JobSpec.{', JobSpec.'.join(sorted(NEWER_JOB_FIELDS))}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
