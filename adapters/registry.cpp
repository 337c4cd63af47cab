#include "adapters/registry.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "platform/named_registry.h"

namespace fencecheck {
namespace {

const BackendInfo::Binary kNode{"node", "nodejs"};
const BackendInfo::Binary kJava{"java", "default-jre-headless"};
// Debian's interpreter: the one python3-redis installs for, whatever $PATH puts first.
const BackendInfo::Binary kPython{"python3", "python3-redis", {"/usr/bin"}};

const char* kNpmHint = "run scripts/setup.sh (it runs npm ci in the adapter's folder)";

}  // namespace

const std::vector<AdapterInfo>& adapter_registry() {
  static const std::vector<AdapterInfo> registry = {
      {.name = "node-redlock",
       .library = "redlock",
       .version = "4.2.0",
       .language = "node",
       .backends = {"redlock"},
       .promise = "Redlock over independent masters; a lock is only granted while its validity has not run out",
       .interpreter = kNode,
       .installed_marker = "node_modules/redlock/package.json",
       .install_hint = kNpmHint,
       .offers = {Capability::kPausesInsideClient}},
      {.name = "node-redlock-5",
       .library = "redlock",
       .version = "5.0.0-beta.2",
       .language = "node",
       .backends = {"redlock"},
       .promise = "the same Redlock algorithm, rewritten (beta)",
       .interpreter = kNode,
       .installed_marker = "node_modules/redlock/package.json",
       .install_hint = kNpmHint,
       .offers = {Capability::kPausesInsideClient}},
      {.name = "redis-semaphore",
       .library = "redis-semaphore",
       .version = "5.8.0",
       .language = "node",
       .backends = {"redis"},
       .promise = "a Mutex refreshed in the background; onLockLost is called when a refresh finds the lock gone",
       .interpreter = kNode,
       .installed_marker = "node_modules/redis-semaphore/package.json",
       .install_hint = kNpmHint},
      {.name = "curator",
       .library = "curator-recipes",
       .version = "5.4.0",
       .language = "java",
       .backends = {"zookeeper"},
       .promise = "InterProcessMutex: at any snapshot in time no two clients think they hold the same lock",
       .interpreter = kJava,
       .installed_marker = "classes",
       .install_hint = "rebuild (scripts/build.sh compiles it; apt-get install libcurator-recipes-java first)"},
      {.name = "redis-py",
       .library = "redis",
       .version = "4.3.4",
       .language = "python",
       .backends = {"redis"},
       .promise = "Lock: a shared, distributed lock with a timeout after which it is released",
       .interpreter = kPython,
       .installed_marker = "/usr/lib/python3/dist-packages/redis/lock.py",
       .install_hint = "apt-get install python3-redis (or run scripts/setup.sh)"},
      {.name = "kazoo",
       .library = "kazoo",
       .version = "2.8.0",
       .language = "python",
       .backends = {"zookeeper"},
       .promise = "Lock: a ZooKeeper lock recipe; a connection listener is told SUSPENDED and LOST, and on "
                  "LOST locks \"will need to be re-acquired\"",
       .interpreter = kPython,
       .installed_marker = "/usr/lib/python3/dist-packages/kazoo/recipe/lock.py",
       .install_hint = "apt-get install python3-kazoo (or run scripts/setup.sh)",
       .offers = {},
       .needs = {Capability::kRunsAdapters},
       .options = {{"lost_on",
                    "which connection state makes the adapter report its locks lost: suspended (SUSPENDED or "
                    "LOST, as kazoo's docs advise) or lost (LOST only, which comes after a reconnect)",
                    "suspended",
                    {"suspended", "lost"}}}},
      {.name = "tooz",
       .library = "tooz",
       .version = "3.1.0",
       .language = "python",
       // The driver is the run's backend: tooz's redis, zookeeper, etcd3+http, postgresql,
       // mysql and memcached drivers.
       .backends = {"redis", "zookeeper", "etcd", "postgres", "mariadb", "memcached"},
       .promise = "Coordinator.get_lock: a distributed lock kept alive by the coordinator's heartbeat",
       .interpreter = kPython,
       .installed_marker = "/usr/lib/python3/dist-packages/tooz/coordination.py",
       .install_hint = "apt-get install python3-tooz python3-psycopg2 python3-pymysql python3-pymemcache "
                       "python3-etcd3gw (or run scripts/setup.sh)",
       .offers = {},
       .needs = {Capability::kRunsAdapters},
       .options = {{"etcd_api",
                    "backend etcd: the etcd3+http URL's API path: v3 (what etcd 3.4 serves) or library-default "
                    "(tooz 3.1.0's /v3alpha, which etcd 3.4 removed)",
                    "v3",
                    {"v3", "library-default"}},
                   {"etcd3gw_shim",
                    "backend etcd: on forwards tooz's api_path through etcd3gw.client(), which Debian's etcd3gw "
                    "2.0.0 lacks (without it every etcd3+http coordinator fails: unexpected keyword api_path)",
                    "on",
                    {"on", "off"}}}},
  };
  return registry;
}

const AdapterInfo* find_adapter(std::string_view name) { return find_by_name(adapter_registry(), name); }

Capabilities client_offers(std::string_view client) {
  if (client == kNativeClient) return kNativeClientOffers;
  const AdapterInfo* a = find_adapter(client);
  return a == nullptr ? Capabilities{} : a->offers;
}

BackendOptions resolve_client_options(const std::string& client, const std::vector<std::string>& key_values) {
  const AdapterInfo* a = find_adapter(client);
  static const std::vector<BackendOption> kNone;
  return resolve_declared_options("client " + client, "--client-opt", a == nullptr ? kNone : a->options, key_values);
}

std::vector<std::string> client_names() {
  std::vector<std::string> names = {kNativeClient};
  for (const AdapterInfo& a : adapter_registry()) names.push_back(a.name);
  return names;
}

std::vector<OptionSpec> client_option_specs() {
  OptionSpec client = declare_option("client", OptionReader::kRun, OptionType::kText, kNativeClient, "",
                                     "the lock client: native (fencecheck's own) or a lock library's adapter "
                                     "(fencecheck adapters lists them)");
  client.allowed = client_names();
  OptionSpec wait = declare_option("acquire-timeout-ms", OptionReader::kRun, OptionType::kInteger, 500, "ms",
                                   "adapters: how long a library's acquire may wait for a held lock");
  wait.min = 0;
  return {client, wait};
}

std::filesystem::path adapters_dir() {
  // Absolute: the adapter starts in its own folder, where a relative path means nothing.
  if (const char* env = std::getenv("FENCECHECK_ADAPTERS_DIR"); env != nullptr && *env != '\0') {
    return std::filesystem::absolute(env);
  }
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "adapters";
}

std::filesystem::path adapter_dir(const AdapterInfo& a) { return adapters_dir() / a.name; }
std::filesystem::path adapter_program(const AdapterInfo& a) { return adapter_dir(a) / "run"; }

std::optional<std::string> adapter_backend_problem(const std::string& client, const std::string& backend) {
  if (client == kNativeClient) return std::nullopt;
  const AdapterInfo* a = find_adapter(client);
  if (a == nullptr) return std::nullopt;  // the option's allowed words say so
  if (std::find(a->backends.begin(), a->backends.end(), backend) != a->backends.end()) return std::nullopt;
  std::string fits;
  for (const auto& b : a->backends) fits += (fits.empty() ? "" : ", ") + b;
  return "--client " + client + " (" + a->library + " " + a->version + ") locks on backend " + fits +
         ", not " + backend + ": use --backend " + a->backends.front();
}

std::optional<std::string> adapter_install_problem(const AdapterInfo& a) {
  if (!find_binary(a.interpreter)) {
    return a.interpreter.program + " is not installed (needed by adapter " + a.name +
           "): apt-get install " + a.interpreter.debian_package + " (or run scripts/setup.sh)";
  }
  std::filesystem::path run = adapter_program(a);
  if (::access(run.c_str(), X_OK) != 0) {
    return "adapter " + a.name + " is not built: " + run.string() + " is missing; run scripts/build.sh";
  }
  if (!a.installed_marker.empty() && !std::filesystem::exists(adapter_dir(a) / a.installed_marker)) {
    return "adapter " + a.name + " has no dependencies installed (" +
           (adapter_dir(a) / a.installed_marker).string() + " is missing): " + a.install_hint;
  }
  return std::nullopt;
}

}  // namespace fencecheck
