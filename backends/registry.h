// The backend registry: every lock service fencecheck can test, by name. Adding a backend
// means adding its folder and one line in registry.cpp.
//
// Backend options (`fencecheck run --backend-opt key=value`) are declared by each backend
// with their default and allowed values; resolve_backend_options() validates the user's
// list against them and fills in the defaults, so that config.json and repro.sh record
// every option a run used. The registry is built once and immutable; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/lock_client.h"
#include "backends/lock_server.h"
#include "platform/capabilities.h"

namespace fencecheck {

// Option name → value, every declared option present once resolved.
using BackendOptions = std::map<std::string, std::string>;

struct BackendOption {
  std::string name;                  // "persistence"
  std::string description;           // one line for --help and errors
  std::string default_value;         // "none"
  std::vector<std::string> allowed;  // empty: any non-empty value
};

struct BackendInfo {
  std::string name;         // "redis"
  std::string description;  // one line for --help and errors
  // The nodes its servers run on with default options ({"n1"} for redis); a server made
  // with other options may use others: LockServer::nodes() is authoritative.
  std::vector<std::string> server_nodes;
  // A server program that must be installed, and where it comes from: the one place that
  // says so (platform/ names no backend; scripts/setup.sh installs every debian_package,
  // which a unit test checks).
  struct Binary {
    Binary(std::string program_name, std::string package, std::vector<std::string> extra_dirs = {})
        : program(std::move(program_name)), debian_package(std::move(package)), dirs(std::move(extra_dirs)) {}
    std::string program;           // "postgres"
    std::string debian_package;    // "postgresql"
    // Where the package installs it when that is off $PATH and the sbin directories, as
    // os::program_search_path takes them: {"/usr/lib/postgresql/*/bin"}, newest first.
    std::vector<std::string> dirs;
  };
  std::vector<Binary> binaries;
  std::vector<BackendOption> options;
  // What its lock promises the holder, in one sentence of its own documentation's terms
  // (the datasheet sets what was measured beside it).
  std::string promise;
  // How long a silent holder keeps a grant, in ms, from the backend's resolved options and
  // --ttl-ms, when not --ttl-ms itself (a ZooKeeper session's session_timeout_ms, etcd's
  // lease_ttl_s); empty: --ttl-ms. fencecheck budget scales its default range by it.
  std::function<std::int64_t(const BackendOptions& options, std::int64_t ttl_ms)> lease_ms = nullptr;
  // What it offers of the backend capabilities (platform/capabilities.h): kNamesLeader when
  // LockServer::leader() names one; kServerClocksReachable when libfcclock (LD_PRELOAD)
  // reaches its servers' clocks — without it a clock fault aimed at its servers is refused
  // before the run (one aimed at the clients, --nemesis-targets clients, is not), and at
  // run time ServerClocks checks each server once more, by the clock file it mapped;
  // kKillsSessions when LockServer::kill_sessions ends a client's sessions (kill-session);
  // kEvictsKeys when LockServer::press_memory makes its servers evict (memory-pressure).
  Capabilities offers;
  // Those of `offers` that some option values take away (memcached's evict=off withholds
  // kEvictsKeys), each with why, from the resolved options; nullptr: none. The run's
  // capability check (harness/run/capability_check.h) reads it with the run's options.
  std::function<std::vector<CapabilityReason>(const BackendOptions& options)> withheld = nullptr;
  // What it needs of the runtime: kSharesFiles when its setup works on what its servers
  // made, through the controller's own files (a runtime whose nodes hold copies is refused).
  Capabilities needs;
  // Why it lacks a backend capability, or needs a runtime one: quoted in the refusal.
  std::vector<CapabilityReason> reasons;
  // options: resolved (resolve_backend_options). Throws std::invalid_argument for a value
  // the backend cannot use.
  std::function<std::unique_ptr<LockServer>(const BackendOptions& options)> make_server;
  // client_config: LockServer::client_config(); client_name: the worker's node, used to
  // make lock owners unique. Throws std::invalid_argument for a malformed config.
  std::function<std::unique_ptr<LockClient>(const nlohmann::json& client_config,
                                            const std::string& client_name)>
      make_client;
  // The servers' "host:port" addresses in client_config, for a lock library's adapter
  // (adapters/PROTOCOL.md, init's endpoints). Throws std::invalid_argument like make_client.
  std::function<std::vector<std::string>(const nlohmann::json& client_config)> endpoints;
};

const std::vector<BackendInfo>& backend_registry();
// What backend offers with these resolved options (`offers` less what `withheld` takes),
// and why it lacks each capability it lacks (`withheld`'s first, then `reasons`: reason_for takes the first).
Capabilities backend_offers(const BackendInfo& backend, const BackendOptions& options);
std::vector<CapabilityReason> backend_reasons(const BackendInfo& backend, const BackendOptions& options);
// nullptr for an unknown name.
const BackendInfo* find_backend(std::string_view name);
// "redis, redlock, …" for error messages.
std::string backend_names();

// key_values: "key=value" strings as typed. Returns every declared option, defaults filled
// in. Throws std::invalid_argument naming the backend, the option and what is allowed, for
// a malformed pair, an unknown key, a key given twice or a value not allowed.
BackendOptions resolve_backend_options(const BackendInfo& backend,
                                       const std::vector<std::string>& key_values);
// The same for any declared option list: `owner` names whose options they are in errors
// ("backend redis", "client tooz") and `flag` the command-line flag they came from
// ("--backend-opt").
BackendOptions resolve_declared_options(const std::string& owner, std::string_view flag,
                                        const std::vector<BackendOption>& declared,
                                        const std::vector<std::string>& key_values);

// Numbers in a backend's options and client configs, checked one way for every backend.
// option_number: the whole number option `name` of resolved options holds, within min..max.
// config_number: the integer member `field` of a client config object, within min..max, or
// fallback when absent. Both throw std::invalid_argument naming `what` (the backend, or
// "etcd client config"), the option or field, the range and the value found.
std::int64_t option_number(const BackendOptions& options, std::string_view what, const std::string& name,
                           std::int64_t min, std::int64_t max);
std::int64_t config_number(const nlohmann::json& config, std::string_view what, const char* field,
                           std::int64_t min, std::int64_t max, std::int64_t fallback);

// The full path of bin (os::find_executable over bin.dirs); nullopt when not installed.
// Looks in the package's own directories (dirs) first, then on $PATH.
std::optional<std::string> find_binary(const BackendInfo::Binary& bin);

// nullopt when every binary of the backend is installed; otherwise one message naming the
// first missing program and what to install, e.g. "redis-server is not installed (needed by
// backend redis): apt-get install redis-server (or run scripts/setup.sh)". Looks programs
// up with find_binary, as the servers do before they spawn them.
std::optional<std::string> missing_binary_message(const BackendInfo& backend);

}  // namespace fencecheck
