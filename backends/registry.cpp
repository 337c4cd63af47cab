#include "backends/registry.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "backends/etcd/etcd_backend.h"
#include "backends/mariadb/mariadb_backend.h"
#include "backends/memcached/memcached_backend.h"
#include "backends/nats/nats_backend.h"
#include "backends/postgres/postgres_backend.h"
#include "backends/redis/redis_backend.h"
#include "backends/redlock/redlock_backend.h"
#include "backends/zookeeper/zookeeper_backend.h"
#include "platform/named_registry.h"
#include "platform/os_util.h"

namespace fencecheck {

const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry = {
      redis_backend_info(),
      postgres_backend_info(),
      redlock_backend_info(),
      zookeeper_backend_info(),
      etcd_backend_info(),
      mariadb_backend_info(),
      memcached_backend_info(),
      nats_backend_info(),
  };
  return registry;
}

Capabilities backend_offers(const BackendInfo& backend, const BackendOptions& options) {
  Capabilities taken;
  if (backend.withheld) {
    for (const CapabilityReason& r : backend.withheld(options)) taken = taken | Capabilities{r.capability};
  }
  return backend.offers - taken;
}

std::vector<CapabilityReason> backend_reasons(const BackendInfo& backend, const BackendOptions& options) {
  std::vector<CapabilityReason> out = backend.withheld ? backend.withheld(options) : std::vector<CapabilityReason>{};
  out.insert(out.end(), backend.reasons.begin(), backend.reasons.end());
  return out;
}

const BackendInfo* find_backend(std::string_view name) { return find_by_name(backend_registry(), name); }
std::string backend_names() { return names_of(backend_registry()); }

BackendOptions resolve_declared_options(const std::string& owner, std::string_view flag,
                                        const std::vector<BackendOption>& declared,
                                        const std::vector<std::string>& key_values) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(owner + ": " + what); };
  BackendOptions given;
  for (const std::string& kv : key_values) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) fail(std::string(flag) + " \"" + kv + "\" is not key=value");
    std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    const BackendOption* option = find_by_name(declared, key);
    if (option == nullptr) {
      fail("unknown option \"" + key + "\"" +
           (declared.empty() ? " (it has none)" : " (known: " + names_of(declared) + ")"));
    }
    if (!given.emplace(key, value).second) fail("option \"" + key + "\" given twice");
    const auto& allowed = option->allowed;
    if (value.empty() || (!allowed.empty() && std::find(allowed.begin(), allowed.end(), value) == allowed.end())) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail("option \"" + key + "\" cannot be \"" + value + "\"" +
           (allowed.empty() ? " (it needs a value)" : " (allowed: " + list + ")"));
    }
  }
  BackendOptions resolved;
  for (const BackendOption& option : declared) {
    auto it = given.find(option.name);
    resolved[option.name] = it == given.end() ? option.default_value : it->second;
  }
  return resolved;
}

BackendOptions resolve_backend_options(const BackendInfo& backend, const std::vector<std::string>& key_values) {
  return resolve_declared_options("backend " + backend.name, "--backend-opt", backend.options, key_values);
}

std::int64_t option_number(const BackendOptions& options, std::string_view what, const std::string& name,
                           std::int64_t min, std::int64_t max) {
  auto it = options.find(name);
  const std::string text = it == options.end() ? "" : it->second;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    throw std::invalid_argument(std::string(what) + " option " + name + " must be a whole number in " +
                                std::to_string(min) + ".." + std::to_string(max) + ", got \"" + text + "\"");
  }
  return v;
}

std::int64_t config_number(const nlohmann::json& config, std::string_view what, const char* field,
                           std::int64_t min, std::int64_t max, std::int64_t fallback) {
  if (!config.is_object() || !config.contains(field)) return fallback;
  const nlohmann::json& v = config.at(field);
  if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
    throw std::invalid_argument(std::string(what) + ": \"" + field + "\" must be an integer in " +
                                std::to_string(min) + ".." + std::to_string(max) + ", got " + v.dump());
  }
  return v.get<std::int64_t>();
}

std::optional<std::string> find_binary(const BackendInfo::Binary& bin) {
  // The package's own directory first: the same path then holds on every Debian 12 node,
  // a container of the fencecheck image included, whatever else $PATH has here.
  for (const std::string& dir : os::program_search_path(bin.dirs)) {
    bool packaged = false;
    for (const std::string& pattern : bin.dirs) {
      packaged = packaged || dir.rfind(pattern.substr(0, pattern.find('*')), 0) == 0;
    }
    if (!packaged) continue;
    if (auto found = os::find_executable(dir + "/" + bin.program)) return found;
  }
  return os::find_executable(bin.program, bin.dirs);
}

std::optional<std::string> missing_binary_message(const BackendInfo& backend) {
  for (const BackendInfo::Binary& bin : backend.binaries) {
    if (!find_binary(bin)) {
      return bin.program + " is not installed (needed by backend " + backend.name +
             "): apt-get install " + bin.debian_package + " (or run scripts/setup.sh)";
    }
  }
  return std::nullopt;
}

}  // namespace fencecheck
