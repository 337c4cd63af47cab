// The adapter registry: every lock library fencecheck can test through an adapter
// (adapters/PROTOCOL.md), by the name `fencecheck run --client NAME` takes. Adding a
// library means adding its folder adapters/<name>/ (with an executable `run`) and one line
// in registry.cpp. `native` is not an adapter: it names fencecheck's own C++ clients.
//
// The registry is built once and immutable; thread-safe. Nothing here blocks.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/registry.h"
#include "options/option_spec.h"
#include "platform/capabilities.h"

namespace fencecheck {

inline constexpr const char* kNativeClient = "native";

struct AdapterInfo {
  std::string name;                   // "node-redlock": also its folder under adapters/
  std::string library;                // "redlock" (npm), as the library calls itself
  std::string version;                // "4.2.0": the version its folder pins
  std::string language;               // "node", "java", "python"
  std::vector<std::string> backends;  // the backends whose servers it can lock on
  std::string promise;                // what the library's own documentation promises
  BackendInfo::Binary interpreter;    // the program its `run` execs, and its Debian package
  // A file that exists once its dependencies are installed or compiled: relative to the
  // adapter's folder ("node_modules/redlock/package.json") or absolute (a Debian package's).
  std::string installed_marker;
  std::string install_hint;           // what makes the marker appear
  // What it offers of the client capabilities: kPausesInsideClient when its adapter can
  // stop its own thread right after the library sent an acquire's lock commands (the
  // protocol's capability pause_after_send), which the pause-after-send fault needs.
  Capabilities offers = {};
  // What it needs of the runtime: its interpreter and folder on the client nodes.
  Capabilities needs = {Capability::kRunsAdapters};
  // Its own options (`--client-opt key=value`), sent to the adapter in init's `options`
  // with every default filled in, and recorded in config.json.
  std::vector<BackendOption> options = {};
};

// What the native client (fencecheck's own C++ clients) offers: none of the client
// capabilities yet. It needs nothing of the runtime.
inline constexpr Capabilities kNativeClientOffers = {};
// What a --client value offers: kNativeClientOffers for native, an adapter's `offers`;
// nothing for an unknown name.
Capabilities client_offers(std::string_view client);

const std::vector<AdapterInfo>& adapter_registry();
// nullptr for an unknown name (and for "native").
const AdapterInfo* find_adapter(std::string_view name);
// "native, node-redlock, …": every value --client takes.
std::vector<std::string> client_names();

// The options of --client `client` from `key=value` strings (--client-opt), every declared
// one with its default filled in. Throws std::invalid_argument naming the client, the option
// and what is allowed; the native client and an unknown name have none.
BackendOptions resolve_client_options(const std::string& client, const std::vector<std::string>& key_values);

// `--client NAME` (native or an adapter) and `--acquire-timeout-ms` (how long a library's
// acquire may wait for a held lock), for the run's option schema.
std::vector<OptionSpec> client_option_specs();

// Where the adapters' folders are: $FENCECHECK_ADAPTERS_DIR when set, else `adapters/`
// beside the fencecheck binary (the build copies them there).
std::filesystem::path adapters_dir();
// The adapter's folder and its `run` program.
std::filesystem::path adapter_dir(const AdapterInfo& a);
std::filesystem::path adapter_program(const AdapterInfo& a);

// nullopt when client (a --client value) can lock on backend; otherwise one sentence
// naming the backends it fits.
std::optional<std::string> adapter_backend_problem(const std::string& client, const std::string& backend);
// nullopt when the adapter can start here: its interpreter is installed, its folder and
// `run` exist and its dependencies are in place. Otherwise one sentence saying what to do.
std::optional<std::string> adapter_install_problem(const AdapterInfo& a);

}  // namespace fencecheck
