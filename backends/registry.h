// The backend registry: every lock service fencecheck can test, by name. Adding a backend
// means adding its folder and one line in registry.cpp.
//
// The registry is built once and immutable; its functions are thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/lock_client.h"
#include "backends/lock_server.h"

namespace fencecheck {

struct BackendInfo {
  std::string name;         // "redis"
  std::string description;  // one line for --help and errors
  std::vector<std::string> server_nodes;  // nodes its servers run on: {"n1"} for redis
  struct Binary {
    std::string program;          // "redis-server"
    std::string debian_package;   // "redis-server"
  };
  std::vector<Binary> binaries;  // server programs that must be installed
  // options: backend-specific settings (e.g. {"persistence": true}); throws
  // std::invalid_argument naming a bad option.
  std::function<std::unique_ptr<LockServer>(const nlohmann::json& options)> make_server;
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

// Where a server program is looked up: $PATH, then the directories Debian packages put
// daemons in that are not on a normal PATH (/usr/sbin, /usr/share/zookeeper/bin, …).
std::vector<std::string> server_search_path();
// The full path of program, or nullopt when it is not installed.
std::optional<std::string> find_server_binary(const std::string& program);
// nullopt when every binary of the backend is installed; otherwise one message naming the
// first missing program and what to install, e.g. "redis-server is not installed:
// apt-get install redis-server (or run scripts/setup.sh)".
std::optional<std::string> missing_binary_message(const BackendInfo& backend);

}  // namespace fencecheck
