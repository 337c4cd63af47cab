#include "harness/suite/k8s_job.h"

#include <algorithm>
#include <cstdint>
#include <regex>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness/run/run_command.h"
#include "harness/run/run_config.h"
#include "platform/yaml_text.h"

namespace fencecheck {
namespace {

using Doc = nlohmann::ordered_json;  // keys in the order written, as a person reads a manifest

constexpr const char* kPlanDir = "/plan";
constexpr const char* kStoreDir = "/store";
// A ConfigMap holds at most 1 MiB (data and metadata together); leave room for the latter.
constexpr std::size_t kConfigMapLimit = 1000 * 1000;

// The path of the suite's store inside the volume: relative, plain names.
void check_store_path(const std::string& path) {
  static const std::regex component("[A-Za-z0-9_][-A-Za-z0-9._]*");
  std::size_t start = 0;
  bool ok = !path.empty() && path.size() <= 200;
  while (ok && start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    ok = std::regex_match(path.substr(start, end - start), component);
    start = end + 1;
  }
  if (!ok) {
    throw std::invalid_argument("--store-path \"" + path + "\": a relative path of plain names (letters, digits, "
                                "'.', '_', '-'), such as suite-kleppmann/nightly-42");
  }
}

void check_options(const K8sJobOptions& o, const std::string& name) {
  if (o.image.empty()) throw std::invalid_argument("--image: the fencecheck image the cluster pulls is required");
  // The API's bound with backoffLimitPerIndex.
  if (o.parallelism < 1 || o.parallelism > 100000) throw std::invalid_argument("--parallelism: 1 to 100000 pods");
  if (o.retries < 0) throw std::invalid_argument("--retries: 0 or more");
  if (o.row_deadline_s < 0) throw std::invalid_argument("--row-deadline: seconds, 0 for the default");
  // Object names are DNS labels; an Indexed Job's pods are named NAME-rows-<index>-<5 chars>.
  static const std::regex label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  if (name.size() > 40 || !std::regex_match(name, label)) {
    throw std::invalid_argument((o.name.empty() ? "the default name \"" : "--name \"") + name +
                                "\": lower-case letters, digits and '-', at most 40 characters" +
                                (o.name.empty() ? "; give --name" : ""));
  }
  static const std::regex subdomain("[a-z0-9]([-.a-z0-9]*[a-z0-9])?");
  if (!o.pvc.empty() && (o.pvc.size() > 253 || !std::regex_match(o.pvc, subdomain))) {
    throw std::invalid_argument("--pvc \"" + o.pvc + "\": not a Kubernetes object name");
  }
  if (!o.storage_class.empty() && (o.storage_class.size() > 253 || !std::regex_match(o.storage_class, subdomain))) {
    throw std::invalid_argument("--storage-class \"" + o.storage_class + "\": not a Kubernetes object name");
  }
  // A quantity (1.5Gi, 20G, 1e9), more than zero.
  static const std::regex quantity("([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?");
  const std::string mantissa = o.storage.substr(0, o.storage.find_first_not_of("0123456789."));
  if (!std::regex_match(o.storage, quantity) || mantissa.find_first_of("123456789") == std::string::npos) {
    throw std::invalid_argument("--storage \"" + o.storage + "\": a quantity above zero, such as 20Gi");
  }
  check_store_path(o.store_path);
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
                 const Doc& args, bool privileged, int deadline_s, const K8sJobOptions& o) {
  Doc c = {{"name", container},
           {"image", o.image},
           {"command", Doc::array({"fencecheck"})},
           {"args", args},
           {"volumeMounts", Doc::array({{{"name", "plan"}, {"mountPath", kPlanDir}, {"readOnly", true}},
                                        {{"name", "store"}, {"mountPath", kStoreDir}}})}};
  if (privileged) c["securityContext"] = {{"privileged", true}};
  const std::string claim = o.pvc.empty() ? name + "-store" : o.pvc;
  Doc spec = {{"restartPolicy", "Never"}};
  if (deadline_s > 0) spec["activeDeadlineSeconds"] = deadline_s;
  // The pause process is pid 1 and reaps what a killed server orphans (fencecheck as pid 1
  // would keep them as zombies).
  spec["shareProcessNamespace"] = true;
  spec["containers"] = Doc::array({c});
  spec["volumes"] = Doc::array({{{"name", "plan"}, {"configMap", {{"name", name + "-plan"}}}},
                                {{"name", "store"}, {"persistentVolumeClaim", {{"claimName", claim}}}}});
  return {{"metadata", {{"labels", labels(name, component)}}}, {"spec", spec}};
}

std::string store_dir(const K8sJobOptions& o) { return std::string(kStoreDir) + "/" + o.store_path; }
std::string plan_file() { return std::string(kPlanDir) + "/plan.jsonl"; }

Doc rows_job(const std::string& name, const std::vector<PlanRow>& plan, const K8sJobOptions& o) {
  // No --index: run-row reads the JOB_COMPLETION_INDEX the Job controller sets.
  const Doc args = {"suite", "run-row", "--plan", plan_file(), "--store", store_dir(o)};
  const Doc disrupted = Doc::array({{{"type", "DisruptionTarget"}, {"status", "True"}}});
  const Doc not_retried = {{"containerName", "row"}, {"operator", "NotIn"}, {"values", k8s_retried_exit_codes()}};
  const int deadline = o.row_deadline_s > 0 ? o.row_deadline_s : default_row_deadline_s(plan);
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata(name, "rows")},
          {"spec",
           {{"completionMode", "Indexed"},
            {"completions", plan.size()},
            {"parallelism", o.parallelism},
            {"backoffLimitPerIndex", o.retries},
            {"podFailurePolicy",
             {{"rules", Doc::array({{{"action", "Ignore"}, {"onPodConditions", disrupted}},
                                    {{"action", "FailIndex"}, {"onExitCodes", not_retried}}})}}},
            {"template", pod_template(name, "rows", "row", args, true, deadline, o)}}}};
}

Doc collect_job(const std::string& name, const K8sJobOptions& o) {
  const Doc args = {"suite", "collect", "--store", store_dir(o), "--plan", plan_file(), "--junit",
                    store_dir(o) + "/junit.xml"};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata(name, "collect")},
          {"spec",
           {{"suspend", true},
            {"backoffLimit", 0},
            {"template", pod_template(name, "collect", "collect", args, false, 0, o)}}}};
}

Doc store_claim(const std::string& name, const K8sJobOptions& o) {
  Doc spec = {{"accessModes", Doc::array({"ReadWriteMany"})}};
  if (!o.storage_class.empty()) spec["storageClassName"] = o.storage_class;
  spec["resources"] = {{"requests", {{"storage", o.storage}}}};
  return {{"apiVersion", "v1"}, {"kind", "PersistentVolumeClaim"}, {"metadata", metadata(name, "store")}, {"spec", spec}};
}

std::string how_to_run(const std::string& name, const std::vector<PlanRow>& plan, const K8sJobOptions& o) {
  const std::string status = "-o jsonpath='{.status.conditions[*].type}' | grep -qE 'Complete|Failed'";
  return "# fencecheck suite k8s-job: suite " + plan.front().suite + ", " + std::to_string(plan.size()) +
         " row(s), " + std::to_string(o.parallelism) + " pod(s) at once, image " + o.image + ";\n# the store: " +
         o.store_path + " in claim " + (o.pvc.empty() ? name + "-store" : o.pvc) +
         ".\n# In a namespace whose Pod Security admits privileged pods (docs/ci/kubernetes.md has these\n"
         "# steps with deadlines):\n"
         "#   kubectl create -f THIS_FILE\n"
         "#   until kubectl get job/" + name + "-rows " + status + "; do sleep 30; done\n"
         "#   kubectl patch job/" + name + "-collect --type=merge -p '{\"spec\":{\"suspend\":false}}'\n"
         "#   until kubectl get job/" + name + "-collect " + status + "; do sleep 10; done\n"
         "#   kubectl logs job/" + name + "-collect\n"
         "#   kubectl get pods -l job-name=" + name +
         "-collect -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}'\n"
         "# That exit code is the suite's: 0 as predicted, 1 a prediction missed, 2 undecided, 3 rows missing,\n"
         "# duplicated or foreign, or a row's bench failed. `create`, not `apply`: apply keeps a copy of each\n"
         "# object in an annotation of at most 256 KiB, which a long plan's ConfigMap outgrows.\n";
}

}  // namespace

int default_row_deadline_s(const std::vector<PlanRow>& plan) {
  std::int64_t longest = 0;
  for (const PlanRow& row : plan) {
    try {
      longest = std::max(longest, parse_run_args(row.c.args).opts.integer("time-limit"));
    } catch (const std::exception&) {
      // a plan line the run would refuse: its row fails fast, the default serves
    }
  }
  return static_cast<int>(2 * (longest > 0 ? longest : 30) + 900);
}

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
  if (o.pvc.empty()) docs.push_back(store_claim(name, o));
  docs.push_back(rows_job(name, plan, o));
  docs.push_back(collect_job(name, o));
  std::string out = how_to_run(name, plan, o);
  for (const Doc& d : docs) out += "---\n" + yaml_document(d);
  return out;
}

}  // namespace fencecheck
