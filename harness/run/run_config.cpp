#include "harness/run/run_config.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <random>

#include "backends/registry.h"
#include "platform/runtime.h"
#include "nemesis/clock/node_clocks.h"
#include "nemesis/nemesis.h"
#include "nemesis/targets.h"
#include "platform/errors.h"
#include "workloads/workload.h"

namespace fencecheck {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

void RunConfig::resolve() {
  if (nemesis.size() == 1 && nemesis[0] == "none") nemesis.clear();
  if (runtime.empty()) runtime = default_runtime_kind();
  if (op_timeout_ms == 0) op_timeout_ms = std::max<std::int64_t>(5000, pause_ms + 2000);
  if (stall_ms == 0) stall_ms = std::max<std::int64_t>(10000, 2 * op_timeout_ms);
  if (const BackendInfo* b = find_backend(backend)) {
    try {
      backend_options = resolve_backend_options(*b, backend_opts);
    } catch (const std::invalid_argument&) {
      // problem() says what is wrong
    }
  }
  if (!seed) seed = std::random_device{}() * 4294967296ULL + std::random_device{}();
  std::error_code ec;
  clocks_available = NodeClocks::find_library(std::filesystem::read_symlink("/proc/self/exe", ec)).has_value();
  if (name.empty()) {
    name = backend + "-" + workload + "-" + (nemesis.empty() ? "none" : join(nemesis, "+")) + "-" + resource;
  }
}

std::optional<std::string> RunConfig::problem() const {
  const BackendInfo* b = find_backend(backend);
  if (b == nullptr) return "unknown backend \"" + backend + "\"; valid backends: " + backend_names();
  if (find_workload(workload) == nullptr) {
    return "unknown workload \"" + workload + "\"; valid workloads: " + workload_names();
  }
  try {
    resolve_backend_options(*b, backend_opts);
  } catch (const std::invalid_argument& e) {
    return std::string("--backend-opt: ") + e.what();
  }
  for (const auto& f : nemesis) {
    const FaultInfo* info = find_fault(f);
    if (info == nullptr) return "unknown fault \"" + f + "\"; valid faults: " + fault_names() + " (or none)";
    if (info->needs_net && runtime == "local") {
      return "fault \"" + f + "\" cuts the network, which needs the netns runtime: run as root without --runtime local";
    }
    if (info->needs_clocks && !clocks_available) {
      return "fault \"" + f + "\" shifts node clocks, but libfcclock.so is not beside the fencecheck "
             "binary: rebuild (scripts/build.sh)";
    }
    if (info->needs_leader && !b->has_leader) {
      return "fault \"" + f + "\" cuts off the leader, but backend " + backend + " has none";
    }
  }
  if (resource != "fenced" && resource != "unfenced") {
    return "--resource must be fenced or unfenced, not \"" + resource + "\"";
  }
  if (runtime != "netns" && runtime != "local") return "--runtime must be netns or local, not \"" + runtime + "\"";
  if (runtime == "netns" && ::geteuid() != 0) {
    return "the netns runtime needs root: run as root (or with sudo), or pass --runtime local";
  }
  if (concurrency < 1 || concurrency > 64) return "--concurrency must be between 1 and 64";
  if (keys < 1 || keys > 1000) return "--keys must be between 1 and 1000";
  if (ttl_ms <= 0) return "--ttl-ms must be positive (a lease of " + std::to_string(ttl_ms) + " ms)";
  if (hold_ms < 0) return "--hold-ms must not be negative";
  if (!std::isfinite(time_limit_s) || time_limit_s <= 0) {
    return "--time-limit must be a positive number of seconds";
  }
  if (pause_ms <= 0) return "--pause-ms must be positive";
  if (static_cast<double>(pause_ms) >= time_limit_s * 1000) {
    return "--pause-ms (" + std::to_string(pause_ms) + " ms) must be shorter than --time-limit (" +
           std::to_string(time_limit_s) + " s)";
  }
  if (nemesis_interval_ms <= 0) return "--nemesis-interval must be positive";
  if (restart_ms < 0) return "--restart-ms must not be negative";
  if (clock_max_ms <= 0) return "--clock-max-ms must be positive";
  if (clock_min_ms < 0 || clock_min_ms > clock_max_ms) {
    return "--clock-min-ms must be between 0 and --clock-max-ms (" + std::to_string(clock_max_ms) + ")";
  }
  if (!nemesis_targets.empty() && !is_target_spec(nemesis_targets)) {
    return "--nemesis-targets must be one of " + join(target_specs(), ", ") + ", not \"" + nemesis_targets + "\"";
  }
  if (op_timeout_ms <= 0) return "--op-timeout-ms must be positive";
  if (max_info < 1) return "--max-info must be at least 1";
  if (stall_ms <= 0) return "--stall-ms must be positive";
  if (!name.empty() && (name.find('/') != std::string::npos || name == "." || name == "..")) {
    return "--name must not contain '/'";
  }
  if (auto missing = missing_binary_message(*b)) return *missing;
  return std::nullopt;
}

nlohmann::json RunConfig::to_json() const {
  return {{"backend", backend},
          {"backend_options", backend_options},
          {"workload", workload},
          {"nemesis", nemesis},
          {"resource", resource},
          {"runtime", runtime},
          {"concurrency", concurrency},
          {"keys", keys},
          {"hold_ms", hold_ms},
          {"ttl_ms", ttl_ms},
          {"pause_ms", pause_ms},
          {"nemesis_interval_ms", nemesis_interval_ms},
          {"restart_ms", restart_ms},
          {"clock_max_ms", clock_max_ms},
          {"clock_min_ms", clock_min_ms},
          {"nemesis_targets", nemesis_targets},
          {"op_timeout_ms", op_timeout_ms},
          {"max_info", max_info},
          {"stall_ms", stall_ms},
          {"time_limit_s", time_limit_s},
          {"seed", seed ? nlohmann::json(*seed) : nlohmann::json()},
          {"store", store},
          {"name", name}};
}

RunConfig RunConfig::from_json(const nlohmann::json& j, const std::string& file) {
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
  get("workload", c.workload);
  get("nemesis", c.nemesis);
  if (c.nemesis.empty()) c.nemesis = {"none"};
  get("resource", c.resource);
  get("runtime", c.runtime);
  get("concurrency", c.concurrency);
  get("keys", c.keys);
  get("hold_ms", c.hold_ms);
  get("ttl_ms", c.ttl_ms);
  get("pause_ms", c.pause_ms);
  get("nemesis_interval_ms", c.nemesis_interval_ms);
  get("restart_ms", c.restart_ms);
  get("clock_max_ms", c.clock_max_ms);
  // Added later: a stored run from before has the defaults.
  if (j.contains("clock_min_ms")) get("clock_min_ms", c.clock_min_ms);
  if (j.contains("nemesis_targets")) get("nemesis_targets", c.nemesis_targets);
  get("op_timeout_ms", c.op_timeout_ms);
  get("max_info", c.max_info);
  get("stall_ms", c.stall_ms);
  get("time_limit_s", c.time_limit_s);
  std::uint64_t seed = 0;
  get("seed", seed);
  c.seed = seed;
  get("store", c.store);
  get("name", c.name);
  return c;
}

std::vector<std::string> RunConfig::repro_args() const {
  auto num = [](double d) {  // the shortest text that reads back as exactly d
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
    return std::string(buf, end);
  };
  std::vector<std::string> args = {"--backend", backend};
  for (const auto& [k, v] : backend_options) args.insert(args.end(), {"--backend-opt", k + "=" + v});
  std::vector<std::string> rest = {"--workload", workload, "--nemesis",
          nemesis.empty() ? "none" : join(nemesis, ","), "--resource", resource, "--runtime", runtime,
          "--concurrency", std::to_string(concurrency), "--keys", std::to_string(keys),
          "--hold-ms", std::to_string(hold_ms), "--ttl-ms", std::to_string(ttl_ms),
          "--pause-ms", std::to_string(pause_ms), "--nemesis-interval", std::to_string(nemesis_interval_ms),
          "--restart-ms", std::to_string(restart_ms), "--clock-max-ms", std::to_string(clock_max_ms),
          "--clock-min-ms", std::to_string(clock_min_ms),
          "--op-timeout-ms", std::to_string(op_timeout_ms), "--max-info", std::to_string(max_info),
          "--stall-ms", std::to_string(stall_ms), "--time-limit", num(time_limit_s),
          "--seed", std::to_string(seed.value_or(0)), "--name", name,
          "--store", std::filesystem::absolute(store).string()};
  args.insert(args.end(), rest.begin(), rest.end());
  if (!nemesis_targets.empty()) args.insert(args.end(), {"--nemesis-targets", nemesis_targets});
  return args;
}

}  // namespace fencecheck
