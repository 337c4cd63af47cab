#include "harness/run/run_config.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include "adapters/registry.h"
#include "backends/registry.h"
#include "harness/run/capability_check.h"
#include "harness/run/topology.h"
#include "nemesis/clock/node_clocks.h"
#include "nemesis/fault_registry.h"
#include "nemesis/plan.h"
#include "nemesis/targets.h"
#include "platform/errors.h"
#include "platform/external_runtime.h"
#include "platform/nodes_file.h"
#include "platform/runtime_registry.h"
#include "workloads/workload.h"

namespace fencecheck {
namespace {

// True when one of `faults` reads the option `name` (its registry entry lists it): a rule
// about that option only binds a run that uses it.
bool a_fault_reads(const std::vector<std::string>& faults, const std::string& name) {
  return std::any_of(faults.begin(), faults.end(), [&](const std::string& f) {
    const FaultInfo* info = find_fault(f);
    return info != nullptr && std::find(info->options.begin(), info->options.end(), name) != info->options.end();
  });
}

}  // namespace

std::pair<std::vector<std::string>, std::vector<std::string>> plan_nodes(const RunConfig& c) {
  const BackendInfo* b = find_backend(c.backend);
  if (b == nullptr) throw std::invalid_argument("unknown backend \"" + c.backend + "\"");
  return {b->make_server(resolve_backend_options(*b, c.backend_opts))->nodes(),
          client_nodes(static_cast<int>(c.opts.integer("concurrency")))};
}

void RunConfig::resolve(const OptionSchema& schema) {
  if (nemesis.size() == 1 && nemesis[0] == "none") nemesis.clear();
  if (runtime.empty()) runtime = default_runtime_kind();
  schema.derive(opts);
  if (const BackendInfo* b = find_backend(backend)) {
    try {
      backend_options = resolve_backend_options(*b, backend_opts);
    } catch (const std::invalid_argument&) {
      // problem() says what is wrong
    }
  }
  try {
    client_options = resolve_client_options(opts.has("client") ? opts.text("client") : std::string(kNativeClient),
                                            client_opts);
  } catch (const std::invalid_argument&) {
    // problem() says what is wrong
  }
  if (!plan.empty()) {
    plan = resolve_plan_path(plan);
    try {
      auto [servers, clients] = plan_nodes(*this);
      nemesis = read_plan(plan, servers, clients).faults;
    } catch (const std::exception&) {
      // problem() says what is wrong with the plan
    }
  }
  if (!seed) seed = std::random_device{}() * 4294967296ULL + std::random_device{}();
  std::error_code ec;
  clocks_available = NodeClocks::find_library(std::filesystem::read_symlink("/proc/self/exe", ec)).has_value();
  if (name.empty()) {
    const std::string faults = !plan.empty() ? "plan-" + std::filesystem::path(plan).stem().string()
                               : nemesis.empty() ? "none" : join(nemesis, "+");
    name = backend + "-" + workload + "-" + faults + "-" + resource;
  }
}

std::optional<std::string> RunConfig::input_problem(const OptionSchema& schema) const {
  const BackendInfo* b = find_backend(backend);
  if (b == nullptr) return "unknown backend \"" + backend + "\"; valid backends: " + backend_names();
  if (find_workload(workload) == nullptr) {
    return "unknown workload \"" + workload + "\"; valid workloads: " + workload_names();
  }
  BackendOptions resolved_options;
  try {
    resolved_options = resolve_backend_options(*b, backend_opts);
  } catch (const std::invalid_argument& e) {
    return std::string("--backend-opt: ") + e.what();
  }
  try {
    resolve_client_options(opts.has("client") ? opts.text("client") : std::string(kNativeClient), client_opts);
  } catch (const std::invalid_argument& e) {
    return std::string("--client-opt: ") + e.what();
  }
  const RuntimeInfo* rt = runtime.empty() ? nullptr : find_runtime(runtime);
  if (!runtime.empty() && rt == nullptr) {
    return "--runtime must be one of " + runtime_names() + ", not \"" + runtime + "\"";
  }
  if (!plan.empty()) {
    if (!replay.empty()) return "--plan cannot be given with --replay, which applies the stored run's own faults";
    try {
      auto [servers, clients] = plan_nodes(*this);
      read_plan(plan, servers, clients);
    } catch (const InputError& e) {
      return std::string("--plan: ") + e.what();
    } catch (const std::invalid_argument&) {
      // the backend's own problem, reported below
    }
  }
  const bool aims_at_clients = opts.has("nemesis-targets") && opts.text("nemesis-targets") == kClientTargets;
  const RunProviders providers{rt, b, opts.has("client") ? opts.text("client") : std::string(kNativeClient),
                               &resolved_options};
  for (const auto& f : nemesis) {
    const FaultInfo* info = find_fault(f);
    if (info == nullptr) return "unknown fault \"" + f + "\"; valid faults: " + fault_names() + " (or none)";
    if (info->planned_only && plan.empty() && replay.empty()) {
      return "fault \"" + f + "\" acts only as a --plan step says (" + info->description + ")";
    }
    if (auto why = missing_capability(fault_needs(*info, aims_at_clients), providers)) {
      if (rt != nullptr && !rt->offers.has(Capability::kRunsServers)) {
        return *why + "; available here: " + faults_available_under(*rt);
      }
      return why;
    }
    if (aims_at_clients && !info->targets_clients &&
        std::find(info->options.begin(), info->options.end(), "nemesis-targets") != info->options.end()) {
      return "--nemesis-targets clients applies to " + faults_aimed_by_client_targets() + " only, not to " + f;
    }
  }
  if (resource != "fenced" && resource != "unfenced") {
    return "--resource must be fenced or unfenced, not \"" + resource + "\"";
  }
  if (auto p = schema.problem(opts)) return p;
  if (opts.has("client")) {
    if (auto p = adapter_backend_problem(opts.text("client"), backend)) return p;
    if (auto p = missing_capability(client_needs(opts.text("client")), providers)) return p;
  }
  const std::string endpoints = opts.has("endpoints") ? opts.text("endpoints") : "";
  if (rt != nullptr && !rt->offers.has(Capability::kRunsServers)) {
    if (endpoints.empty()) {
      return "--runtime " + runtime + " needs --endpoints " + backend + "=HOST:PORT[,HOST:PORT...]: the servers you run";
    }
    try {
      ExternalEndpoints e = parse_endpoints(endpoints);
      if (e.backend != backend) {
        return "--endpoints names backend \"" + e.backend + "\", but the run tests --backend " + backend;
      }
      find_backend(backend)->make_server(backend_options)->client_config_at(e.servers);
    } catch (const std::invalid_argument& e) {
      return std::string("--endpoints: ") + e.what();
    }
  } else if (!endpoints.empty()) {
    return "--endpoints is read by --runtime external only, not by --runtime " + runtime;
  }
  // The rules between options, each written once here.
  const double time_limit_s = opts.number("time-limit");
  // (a plan's steps carry their own lengths: --pause-ms is not theirs)
  if (plan.empty() && a_fault_reads(nemesis, "pause-ms") &&
      static_cast<double>(opts.integer("pause-ms")) >= time_limit_s * 1000) {
    return "--pause-ms (" + std::to_string(opts.integer("pause-ms")) + " ms) must be shorter than --time-limit (" +
           option_text(time_limit_s) + " s)";
  }
  if (opts.integer("hold-min-ms") > opts.integer("hold-ms")) {
    return "--hold-min-ms must be between 0 and --hold-ms (" + std::to_string(opts.integer("hold-ms")) + "), not " +
           std::to_string(opts.integer("hold-min-ms"));
  }
  if (opts.integer("clock-min-ms") > opts.integer("clock-max-ms")) {
    return "--clock-min-ms must be between 0 and --clock-max-ms (" + std::to_string(opts.integer("clock-max-ms")) +
           ")";
  }
  if (!name.empty() && (name.find('/') != std::string::npos || name == "." || name == "..")) {
    return "--name must not contain '/'";
  }
  return std::nullopt;
}

std::optional<std::string> RunConfig::problem(const OptionSchema& schema) const {
  if (auto p = input_problem(schema)) return p;
  for (const auto& f : nemesis) {
    if (find_fault(f)->needs.has(Capability::kShiftsClocks) && !clocks_available) {
      return "fault \"" + f + "\" shifts node clocks, but libfcclock.so is not beside the fencecheck "
             "binary: rebuild (scripts/build.sh)";
    }
  }
  if (const RuntimeInfo* rt = find_runtime(runtime)) {
    if (auto why = rt->unavailable()) return *why;
  }
  if (auto p = missing_capability(backend_needs(*find_backend(backend)), {.runtime = find_runtime(runtime)})) return p;
  const std::string nodes_file = opts.has("nodes-file") ? opts.text("nodes-file") : "";
  if (runtime == "ssh" && nodes_file.empty()) {
    return "--runtime ssh needs --nodes-file FILE: the hosts, one JSON object per line (docs/runtimes.md)";
  }
  if (!nodes_file.empty()) {
    if (runtime != "ssh") return "--nodes-file is read by --runtime ssh only, not by --runtime " + runtime;
    try {
      std::vector<std::string> others = client_nodes(static_cast<int>(opts.integer("concurrency")));
      others.insert(others.begin(), ResourceNode::kNode);
      const auto servers = find_backend(backend)->make_server(backend_options)->nodes();
      if (auto why = hosts_shortfall(read_nodes_file(nodes_file), servers, others)) return why;
    } catch (const InputError& e) {
      return e.what();
    }
  }
  if (const RuntimeInfo* rt = find_runtime(runtime); rt == nullptr || rt->offers.has(Capability::kRunsServers)) {
    // the user's own servers (--runtime external) need nothing installed here
    if (auto missing = missing_binary_message(*find_backend(backend))) return *missing;
  }
  if (const AdapterInfo* a = opts.has("client") ? find_adapter(opts.text("client")) : nullptr) {
    if (auto p = adapter_install_problem(*a)) return p;
  }
  return std::nullopt;
}

nlohmann::json RunConfig::to_json(const OptionSchema& schema) const {
  nlohmann::json j = {{"backend", backend},
                      {"backend_options", backend_options},
                      {"client_options", client_options},
                      {"workload", workload},
                      {"nemesis", nemesis},
                      {"resource", resource},
                      {"runtime", runtime},
                      {"seed", seed ? nlohmann::json(*seed) : nlohmann::json()},
                      {"store", store},
                      {"name", name},
                      {"plan", plan}};
  schema.write_config(opts, j);
  return j;
}

RunConfig RunConfig::from_json(const nlohmann::json& j, const std::string& file, const OptionSchema& schema) {
  auto get = [&](const char* field, auto& out) {
    if (!j.is_object() || !j.contains(field)) throw InputError(file, 0, field, "missing");
    try {
      j.at(field).get_to(out);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(file, 0, field, "has the wrong type: " + j.at(field).dump());
    }
  };
  RunConfig c;
  std::map<std::string, std::string> options;
  get("backend", c.backend);
  get("backend_options", options);
  for (const auto& [k, v] : options) c.backend_opts.push_back(k + "=" + v);
  if (j.contains("client_options")) {  // runs before --client-opt have none
    std::map<std::string, std::string> client;
    get("client_options", client);
    for (const auto& [k, v] : client) c.client_opts.push_back(k + "=" + v);
  }
  get("workload", c.workload);
  get("nemesis", c.nemesis);
  if (c.nemesis.empty()) c.nemesis = {"none"};
  get("resource", c.resource);
  get("runtime", c.runtime);
  c.opts = schema.read_config(j, file);
  std::uint64_t seed = 0;
  get("seed", seed);
  c.seed = seed;
  get("store", c.store);
  get("name", c.name);
  if (j.contains("plan")) get("plan", c.plan);  // runs before --plan have none
  return c;
}

std::vector<std::string> RunConfig::test_args(const OptionSchema& schema) const {
  std::vector<std::string> args = {"--backend", backend};
  for (const auto& [k, v] : backend_options) args.insert(args.end(), {"--backend-opt", k + "=" + v});
  std::vector<std::string> rest = {"--workload", workload, "--resource", resource, "--runtime", runtime};
  if (plan.empty()) {
    rest.insert(rest.end(), {"--nemesis", nemesis.empty() ? "none" : join(nemesis, ",")});
  } else {
    rest.insert(rest.end(), {"--plan", std::filesystem::absolute(plan).string()});
  }
  args.insert(args.end(), rest.begin(), rest.end());
  for (auto& a : schema.args(opts)) args.push_back(std::move(a));
  for (const auto& [k, v] : client_options) args.insert(args.end(), {"--client-opt", k + "=" + v});
  return args;
}

std::vector<std::string> RunConfig::repro_args(const OptionSchema& schema) const {
  std::vector<std::string> args = test_args(schema);
  std::vector<std::string> rest = {"--seed", std::to_string(seed.value_or(0)), "--name", name,
                                   "--store", std::filesystem::absolute(store).string()};
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

}  // namespace fencecheck
