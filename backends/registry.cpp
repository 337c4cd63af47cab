#include "backends/registry.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "backends/redis/redis_backend.h"
#include "platform/named_registry.h"

namespace fencecheck {

const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry = {
      redis_backend_info(),
  };
  return registry;
}

const BackendInfo* find_backend(std::string_view name) { return find_by_name(backend_registry(), name); }
std::string backend_names() { return names_of(backend_registry()); }

std::vector<std::string> server_search_path() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      std::size_t colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  // Debian installs some daemons outside a non-root PATH.
  for (const char* extra : {"/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin",
                            "/usr/share/zookeeper/bin", "/usr/lib/postgresql/15/bin"}) {
    dirs.emplace_back(extra);
  }
  return dirs;
}

std::optional<std::string> find_server_binary(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) == 0) return program;
    return std::nullopt;
  }
  for (const std::string& dir : server_search_path()) {
    std::filesystem::path candidate = std::filesystem::path(dir) / program;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

std::optional<std::string> missing_binary_message(const BackendInfo& backend) {
  for (const BackendInfo::Binary& bin : backend.binaries) {
    if (!find_server_binary(bin.program)) {
      return bin.program + " is not installed (needed by backend " + backend.name +
             "): apt-get install " + bin.debian_package + " (or run scripts/setup.sh)";
    }
  }
  return std::nullopt;
}

}  // namespace fencecheck
