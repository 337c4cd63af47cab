// Every kind of runtime, declared once (runtime_registry.h).
#include "platform/runtime_registry.h"

#include <unistd.h>

#include <stdexcept>

#include "platform/docker_api.h"
#include "platform/external_runtime.h"
#include "platform/named_registry.h"
#include "platform/os_util.h"
#include "platform/runtime_base.h"

namespace fencecheck {

namespace {

std::optional<std::string> needs_root(const std::string& kind, const std::string& why) {
  if (::geteuid() == 0) return std::nullopt;
  return "the " + kind + " runtime needs root (" + why + "): run as root (or with sudo), or pass --runtime local";
}

using C = Capability;

}  // namespace

const std::vector<RuntimeInfo>& runtime_registry() {
  static const std::vector<RuntimeInfo> registry = {
      {.name = "docker",
       .description = "one container of --docker-image per node on a per-run internal network; network faults by "
                      "iptables inside each container, freezes by docker pause (root, a dockerd)",
       .offers = {C::kCutsNetwork, C::kFreezesNodes, C::kShiftsClocks, C::kRunsServers, C::kSharesFiles},
       .reasons = {{C::kRunsAdapters, "its image carries the servers, not the adapters"}},
       .unavailable = []() -> std::optional<std::string> {
         if (auto why = needs_root("docker", "it enters the containers' namespaces")) return why;
         return docker_unavailable();
       },
       .make = [](const std::string& run_id, RunState& state, const OptionValues& opts) {
         return make_docker_runtime(run_id, state, opts.has("docker-image") ? opts.text("docker-image") : "fencecheck",
                                    docker_socket_from_environment(nullptr).value_or(""));
       },
       .options = {declare_option("docker-image", OptionReader::kRun, OptionType::kText, "fencecheck", "",
                                  "the image every node of the docker runtime runs (docker/build.sh makes it)")}},
      {.name = "local",
       .description = "every node is 127.0.0.1 with its own ports; no root, no network faults",
       .offers = {C::kShiftsClocks, C::kRunsServers, C::kRunsAdapters, C::kSharesFiles},
       .reasons = {{C::kCutsNetwork, "every node is 127.0.0.1"}},
       .unavailable = [] { return std::optional<std::string>(); },
       .make = [](const std::string&, RunState& state, const OptionValues&) { return make_local_runtime(state); }},
      {.name = "netns",
       .description = "one network namespace per node on a private bridge; network faults by iptables (root)",
       .offers = {C::kCutsNetwork, C::kShiftsClocks, C::kRunsServers, C::kRunsAdapters, C::kSharesFiles},
       .unavailable = []() -> std::optional<std::string> {
         if (auto why = needs_root("netns", "it creates network namespaces")) return why;
         if (!os::find_executable("ip")) return "the netns runtime needs `ip`: " + os::install_hint("iproute2");
         return std::nullopt;
       },
       .make = [](const std::string& run_id, RunState& state, const OptionValues&) {
         return make_netns_runtime(run_id, state);
       }},
      {.name = "ssh",
       .description = "one real host per node from --nodes-file, driven over OpenSSH (Jepsen's model); network "
                      "faults by iptables in the run's own chain on each host",
       .offers = {C::kCutsNetwork, C::kShiftsClocks, C::kRunsServers},
       .reasons = {{C::kRunsAdapters, "its hosts are not this machine, where the adapters are installed"},
                   {C::kSharesFiles, "each host holds copies of the controller's files"}},
       .unavailable = []() -> std::optional<std::string> {
         if (!os::find_executable("ssh")) return "the ssh runtime needs `ssh`: " + os::install_hint("openssh-client");
         return std::nullopt;
       },
       .make = [](const std::string& run_id, RunState& state, const OptionValues& opts) {
         if (!opts.has("nodes-file") || opts.text("nodes-file").empty()) {
           throw HarnessError("--runtime ssh needs --nodes-file FILE (the hosts, one JSON object per line)");
         }
         return make_ssh_runtime(run_id, state, opts.text("nodes-file"));
       },
       .options = {declare_option("nodes-file", OptionReader::kRun, OptionType::kText, "", "",
                                  "the hosts of the ssh runtime: one JSON object per line (docs/runtimes.md)")}},
      {.name = "external",
       .description = "servers you already run (--endpoints); clients and the resource in namespaces as under netns, "
                      "reaching the servers through the controller; client-side faults only (root)",
       .offers = {C::kCutsNetwork, C::kShiftsClocks, C::kRunsAdapters, C::kSharesFiles},
       .reasons = {{C::kRunsServers, "you run them; it drives the clients only"}},
       .unavailable = []() -> std::optional<std::string> {
         if (auto why = needs_root("external", "its clients run in network namespaces")) return why;
         if (!os::find_executable("ip")) return "the external runtime needs `ip`: " + os::install_hint("iproute2");
         return std::nullopt;
       },
       .make = [](const std::string& run_id, RunState& state, const OptionValues& opts) {
         if (!opts.has("endpoints") || opts.text("endpoints").empty()) {
           throw HarnessError("--runtime external needs --endpoints BACKEND=HOST:PORT[,HOST:PORT...]");
         }
         try {
           return make_external_runtime(run_id, state, parse_endpoints(opts.text("endpoints")).servers);
         } catch (const std::invalid_argument& e) {
           throw HarnessError(std::string("--endpoints: ") + e.what());
         }
       },
       .options = {declare_option("endpoints", OptionReader::kRun, OptionType::kText, "", "",
                                  "the servers of the external runtime: BACKEND=HOST:PORT[,HOST:PORT...] "
                                  "(docs/runtimes.md)")}},
  };
  return registry;
}

bool runtime_offers(const Runtime& runtime, Capability c) {
  const RuntimeInfo* info = find_runtime(runtime.kind());
  return info != nullptr && info->offers.has(c);
}

const RuntimeInfo* find_runtime(std::string_view kind) { return find_by_name(runtime_registry(), kind); }
std::string runtime_names() { return names_of(runtime_registry()); }

std::vector<OptionSpec> runtime_option_specs() {
  std::vector<OptionSpec> specs;
  for (const RuntimeInfo& r : runtime_registry()) specs.insert(specs.end(), r.options.begin(), r.options.end());
  return specs;
}

std::unique_ptr<Runtime> make_runtime(std::string_view kind, const std::string& run_id, RunState& state,
                                      const OptionValues& opts) {
  const RuntimeInfo* info = find_runtime(kind);
  if (info == nullptr) {
    throw HarnessError("unknown runtime '" + std::string(kind) + "': use one of " + runtime_names());
  }
  if (auto why = info->unavailable()) throw HarnessError(*why);
  return info->make(run_id, state, opts);
}

std::string default_runtime_kind() { return ::geteuid() == 0 ? "netns" : "local"; }

}  // namespace fencecheck
