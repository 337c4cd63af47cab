// The runtime registry: every kind of Runtime (runtime.h), declared once in
// runtime_registry.cpp. `--runtime`, its help, the run's validation (what each kind offers,
// platform/capabilities.h) and make_runtime() all follow from an entry.
//
// The kinds: `netns` (root): a network namespace per node on a private bridge
// (netns_runtime.h). `external` (root): netns for the resource and the clients, servers the
// user runs (external_runtime.h). `docker` (root, a dockerd): one container per node
// (docker_runtime.cpp). `ssh`: one real host per node, driven over OpenSSH
// (ssh_runtime.cpp). `local`: every node is 127.0.0.1, no network faults
// (local_runtime.cpp). A new kind is its own file with a factory, plus one entry.
//
// The registry is built once and immutable: thread-safe. Looking an entry up never blocks;
// an entry's `unavailable` may ping a local socket (≤ 2 s), make_runtime builds nothing yet.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "options/option_spec.h"
#include "platform/capabilities.h"
#include "platform/runtime.h"

namespace fencecheck {

struct RuntimeInfo {
  std::string name;
  std::string description;  // one line for --help
  // What it offers of the runtime capabilities: links it cuts, nodes it freezes, clocks the
  // preload library reaches, servers it runs, adapters it can run, the controller's files
  // its nodes see. A fault, backend or client needing one it lacks is refused before the run
  // (harness/run/capability_check.h).
  Capabilities offers;
  // Why it lacks some of them, quoted in the refusal.
  std::vector<CapabilityReason> reasons = {};
  // Why this kind cannot run on this machine now (needs root, a missing tool, no daemon),
  // or nullopt. Quick: looks at privileges and $PATH, at most pings a local socket (≤ 2 s).
  std::function<std::optional<std::string>()> unavailable;
  std::function<std::unique_ptr<Runtime>(const std::string& run_id, RunState& state, const OptionValues& opts)>
      make;
  // The run options it reads (--docker-image): declared here, in the run's option schema.
  std::vector<OptionSpec> options = {};
};
const std::vector<RuntimeInfo>& runtime_registry();
const RuntimeInfo* find_runtime(std::string_view kind);  // nullptr when unknown
// Whether the registry's entry for runtime.kind() offers c (false for a kind it lacks).
bool runtime_offers(const Runtime& runtime, Capability c);
std::string runtime_names();                             // "docker, local, netns, ssh, external"
// The options of every runtime, each once (for the run's option schema).
std::vector<OptionSpec> runtime_option_specs();

// Makes the runtime `kind` names. run_id names every resource; state records them and must
// outlive the Runtime; opts holds the options it reads (defaults when absent). Throws
// HarnessError for an unknown kind, or one unavailable here.
std::unique_ptr<Runtime> make_runtime(std::string_view kind, const std::string& run_id, RunState& state,
                                      const OptionValues& opts = {});
// "netns" when running as root, "local" otherwise.
std::string default_runtime_kind();

// The ssh runtime over the hosts of a nodes file (platform/nodes_file.h). Throws
// InputError for a bad file.
std::unique_ptr<Runtime> make_ssh_runtime(const std::string& run_id, RunState& state,
                                          const std::filesystem::path& nodes_file);

}  // namespace fencecheck
