// The backend registry: every lock service fencecheck can test, by name. Adding a backend
// means adding its folder and one line in registry.cpp.
//
// Backend options (`fencecheck run --backend-opt key=value`) are declared by each backend
// with their default and allowed values; resolve_backend_options() validates the user's
// list against them and fills in the defaults, so that config.json and repro.sh record
// every option a run used. The registry is built once and immutable; thread-safe.
#pragma once

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
  struct Binary {
    std::string program;          // "redis-server"
    std::string debian_package;   // "redis-server"
  };
  std::vector<Binary> binaries;  // server programs that must be installed
  std::vector<BackendOption> options;
  bool has_leader = false;  // LockServer::leader() names one (partition-leader needs it)
  // options: resolved (resolve_backend_options). Throws std::invalid_argument for a value
  // the backend cannot use.
  std::function<std::unique_ptr<LockServer>(const BackendOptions& options)> make_server;
  // client_config: LockServer::client_config(); client_name: the worker's node, used to
  // make lock owners unique. Throws std::invalid_argument for a malformed config.
  std::function<std::unique_ptr<LockClient>(const nlohmann::json& client_config,
                                            const std::string& client_name)>
      make_client;
};

const std::vector<BackendInfo>& backend_registry();
// nullptr for an unknown name.
const BackendInfo* find_backend(std::string_view name);
// "redis, redlock, …" for error messages.
std::string backend_names();

// key_values: "key=value" strings as typed. Returns every declared option, defaults filled
// in. Throws std::invalid_argument naming the backend, the option and what is allowed, for
// a malformed pair, an unknown key, a key given twice or a value not allowed.
BackendOptions resolve_backend_options(const BackendInfo& backend,
                                       const std::vector<std::string>& key_values);

// nullopt when every binary of the backend is installed; otherwise one message naming the
// first missing program and what to install, e.g. "redis-server is not installed (needed by
// backend redis): apt-get install redis-server (or run scripts/setup.sh)". Looks programs
// up exactly as Runtime::spawn does (os::find_executable).
std::optional<std::string> missing_binary_message(const BackendInfo& backend);

}  // namespace fencecheck
