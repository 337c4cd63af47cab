#include "harness/suite/k8s_job.h"

#include <regex>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "platform/yaml_text.h"

namespace fencecheck {
namespace {

using Doc = nlohmann::ordered_json;  // keys in the order written, as a person reads a manifest

constexpr const char* kPlanDir = "/plan";
constexpr const char* kStoreDir = "/store";
// A ConfigMap holds at most 1 MiB (data and metadata together); leave room for the latter.
constexpr std::size_t kConfigMapLimit = 1000 * 1000;

void check_options(const K8sJobOptions& o, const std::string& name) {
  if (o.image.empty()) throw std::invalid_argument("--image: the fencecheck image the cluster pulls is required");
  if (o.parallelism < 1) throw std::invalid_argument("--parallelism: at least 1 pod at once");
  if (o.retries < 0) throw std::invalid_argument("--retries: 0 or more");
  // Object names are DNS labels; an Indexed Job's pods are named NAME-rows-<index>-<5 chars>.
  static const std::regex label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  if (name.size() > 40 || !std::regex_match(name, label)) {
    throw std::invalid_argument("--name \"" + name + "\": lower-case letters, digits and '-', at most 40 characters");
  }
  if (!o.pvc.empty() && (o.pvc.size() > 253 || !std::regex_match(o.pvc, std::regex("[a-z0-9]([-.a-z0-9]*[a-z0-9])?")))) {
    throw std::invalid_argument("--pvc \"" + o.pvc + "\": not a Kubernetes object name");
  }
  if (!std::regex_match(o.storage, std::regex("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?"))) {
    throw std::invalid_argument("--storage \"" + o.storage + "\": a quantity such as 20Gi");
  }
}

Doc labels(const std::string& name, const std::string& component) {
  return {{"app.kubernetes.io/name", "fencecheck"}, {"app.kubernetes.io/instance", name},
          {"app.kubernetes.io/component", component}};
}

Doc metadata(const std::string& name, const std::string& suffix) {
  return {{"name", name + "-" + suffix}, {"labels", labels(name, suffix)}};
}

// The pod of a row or of the collect step: fencecheck with `args`, the plan and the store.
Doc pod_template(const std::string& name, const std::string& component, const std::string& container,
                  const Doc& args, bool privileged, const K8sJobOptions& o) {
  Doc c = {{"name", container},
            {"image", o.image},
            {"command", Doc::array({"fencecheck"})},
            {"args", args},
            {"volumeMounts", Doc::array({{{"name", "plan"}, {"mountPath", kPlanDir}, {"readOnly", true}},
                                          {{"name", "store"}, {"mountPath", kStoreDir}}})}};
  if (privileged) c["securityContext"] = {{"privileged", true}};
  const std::string claim = o.pvc.empty() ? name + "-store" : o.pvc;
  return {{"metadata", {{"labels", labels(name, component)}}},
          {"spec",
           {{"restartPolicy", "Never"},
            // The pause process is pid 1 and reaps what a killed server orphans (fencecheck
            // as pid 1 would leave them zombies).
            {"shareProcessNamespace", true},
            {"containers", Doc::array({c})},
            {"volumes", Doc::array({{{"name", "plan"}, {"configMap", {{"name", name + "-plan"}}}},
                                     {{"name", "store"}, {"persistentVolumeClaim", {{"claimName", claim}}}}})}}}};
}

Doc rows_job(const std::string& name, std::size_t rows, const K8sJobOptions& o) {
  const std::string plan = std::string(kPlanDir) + "/plan.jsonl";
  Doc args = {"suite", "run-row", "--plan", plan, "--store", kStoreDir};  // --index: JOB_COMPLETION_INDEX
  Doc retried = k8s_retried_exit_codes();
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata(name, "rows")},
          {"spec",
           {{"completionMode", "Indexed"},
            {"completions", rows},
            {"parallelism", o.parallelism},
            {"backoffLimitPerIndex", o.retries},
            {"podFailurePolicy",
             {{"rules", Doc::array({{{"action", "Ignore"}, {"onPodConditions", Doc::array({{{"type", "DisruptionTarget"}, {"status", "True"}}})}},
                                     {{"action", "FailIndex"},
                                      {"onExitCodes", {{"containerName", "row"}, {"operator", "NotIn"}, {"values", retried}}}}})}}},
            {"template", pod_template(name, "rows", "row", args, true, o)}}}};
}

Doc collect_job(const std::string& name, const K8sJobOptions& o) {
  Doc args = {"suite", "collect", "--store", kStoreDir, "--plan", std::string(kPlanDir) + "/plan.jsonl",
               "--junit", std::string(kStoreDir) + "/junit.xml"};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata(name, "collect")},
          {"spec",
           {{"suspend", true}, {"backoffLimit", 0}, {"template", pod_template(name, "collect", "collect", args, false, o)}}}};
}

std::string how_to_run(const std::string& name, const std::vector<PlanRow>& plan, const K8sJobOptions& o) {
  const std::string rows = "job/" + name + "-rows";
  return "# fencecheck suite k8s-job: suite " + plan.front().suite + ", " + std::to_string(plan.size()) +
         " row(s), " + std::to_string(o.parallelism) + " pod(s) at once, image " + o.image +
         "\n# In a namespace whose Pod Security admits privileged pods:\n"
         "#   kubectl apply -f THIS_FILE\n"
         "#   until kubectl get " + rows + " -o jsonpath='{.status.conditions[*].type}' | grep -qE 'Complete|Failed'; "
         "do sleep 30; done\n"
         "#   kubectl patch job/" + name + "-collect --type=merge -p '{\"spec\":{\"suspend\":false}}'\n"
         "#   kubectl wait --for=condition=complete --timeout=30m job/" + name + "-collect; kubectl logs job/" +
         name + "-collect\n"
         "# The collect step exits as `fencecheck suite` does (0 as predicted, 1 a prediction missed, 2 undecided,\n"
         "# 3 rows missing); suite.md, suite.html, suite.json, junit.xml and runs/ are in the store volume.\n";
}

}  // namespace

std::string k8s_job_manifests(const std::vector<PlanRow>& plan, const std::string& plan_file_text,
                              const K8sJobOptions& o) {
  if (plan.empty()) throw std::invalid_argument("--plan: the plan has no rows");
  const std::string name = o.name.empty() ? "fencecheck-" + plan.front().suite : o.name;
  check_options(o, name);
  if (plan_file_text.size() > kConfigMapLimit) {
    throw std::invalid_argument("--plan: " + std::to_string(plan_file_text.size()) +
                                " bytes do not fit a ConfigMap (1 MiB); split the suite (--only, fewer --repeat)");
  }
  std::vector<Doc> docs;
  docs.push_back({{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", metadata(name, "plan")},
                  {"data", {{"plan.jsonl", plan_file_text}}}});
  if (o.pvc.empty()) {
    docs.push_back({{"apiVersion", "v1"},
                    {"kind", "PersistentVolumeClaim"},
                    {"metadata", metadata(name, "store")},
                    {"spec",
                     {{"accessModes", Doc::array({"ReadWriteMany"})},
                      {"resources", {{"requests", {{"storage", o.storage}}}}}}}});
  }
  docs.push_back(rows_job(name, plan.size(), o));
  docs.push_back(collect_job(name, o));
  std::string out = how_to_run(name, plan, o);
  for (const Doc& d : docs) out += "---\n" + yaml_document(d);
  return out;
}

}  // namespace fencecheck
