#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>

#include "platform/docker_api.h"
#include "platform/named_registry.h"
#include "platform/os_util.h"
#include "platform/proc_stat.h"
#include "platform/runtime_base.h"
#include "platform/tcp.h"

namespace fencecheck {

const Node& NodeTableRuntime::node(std::string_view name) const {
  for (const auto& n : nodes_) {
    if (n.name == name) return n;
  }
  std::string known;
  for (const auto& n : nodes_) known += (known.empty() ? "" : ", ") + n.name;
  throw HarnessError("unknown node '" + std::string(name) + "' (nodes: " + known + ")");
}

Grudge complete_grudge(const std::vector<std::vector<std::string>>& components) {
  Grudge g;
  for (std::size_t a = 0; a < components.size(); ++a) {
    for (const auto& node : components[a]) {
      auto& drops = g[node];
      for (std::size_t b = 0; b < components.size(); ++b) {
        if (b != a) drops.insert(components[b].begin(), components[b].end());
      }
    }
  }
  return g;
}

void NodeTableRuntime::set_spec_decorator(SpecDecorator decorator) {
  std::lock_guard lock(mu_);
  decorator_ = std::move(decorator);
}

Supervisor& NodeTableRuntime::supervisor() {
  std::lock_guard lock(mu_);
  if (!supervisor_) supervisor_ = std::make_unique<Supervisor>(state_);
  return *supervisor_;
}

Process& NodeTableRuntime::spawn(ProcessSpec spec) {
  SpecDecorator decorate;
  {
    std::lock_guard lock(mu_);
    decorate = decorator_;
  }
  if (decorate) decorate(spec);
  return start(std::move(spec));
}

Process& NodeTableRuntime::start(ProcessSpec spec) { return supervise(spec, entry(node(spec.node))); }

Process& NodeTableRuntime::supervise(const ProcessSpec& spec, const NodeEntry& how) {
  return supervisor().spawn(spec, how);
}

NodeEntry NodeTableRuntime::entry(const Node&) const { return {}; }

Readiness NodeTableRuntime::await_ready(Process& p, const std::function<bool()>& ready,
                                       std::chrono::milliseconds timeout, const CancelCheck& give_up) {
  CancelCheck interrupted;
  {
    std::lock_guard lock(mu_);
    interrupted = interrupted_;
  }
  return supervisor().await_ready(p, ready, timeout,
                                  [&] { return (give_up && give_up()) || (interrupted && interrupted()); });
}

void NodeTableRuntime::set_interrupt_check(CancelCheck check) {
  std::lock_guard lock(mu_);
  interrupted_ = std::move(check);
}

void Runtime::freeze(std::string_view node) {
  throw HarnessError("the " + std::string(kind()) + " runtime cannot freeze node " + std::string(node) +
                     " (use --runtime docker)");
}
void Runtime::thaw(std::string_view node) { freeze(node); }

void Runtime::run_to_end(ProcessSpec spec, std::chrono::milliseconds timeout) {
  Process& p = spawn(std::move(spec));
  p.expect_exit();
  auto ended = [&] { return !p.alive(); };
  Readiness r = Readiness::kReady;
  try {
    r = await_ready(p, ended, timeout);
  } catch (const HarnessError&) {
    // await_ready throws when the process exits before it is "ready": here, that is the end.
  }
  const ProcessSpec& s = p.spec();
  if (r != Readiness::kReady || p.alive()) {
    p.stop(std::chrono::milliseconds(1000));
    if (r == Readiness::kGaveUp) throw Interrupted(s.name + " on node " + s.node + " was interrupted");
    throw HarnessError(s.name + " on node " + s.node + " did not finish within " + std::to_string(timeout.count()) +
                       " ms; last lines of " + s.log.string() + ":\n" + p.log_tail());
  }
  auto status = p.exit_status();
  std::string how = p.describe_exit();
  p.stop(std::chrono::milliseconds(0));
  if (!status || *status != 0) {
    throw HarnessError(s.name + " on node " + s.node + " " + how + "; last lines of " + s.log.string() + ":\n" +
                       p.log_tail());
  }
}

void Runtime::wait_ready(Process& p, const std::function<bool()>& ready, std::chrono::milliseconds timeout) {
  switch (await_ready(p, ready, timeout)) {
    case Readiness::kReady:
      return;
    case Readiness::kGaveUp:
      throw Interrupted(p.spec().name + " on node " + p.spec().node + ": the wait for it to be ready was interrupted");
    case Readiness::kTimedOut:
      break;
  }
  throw HarnessError(p.spec().name + " on node " + p.spec().node + " was not ready after " +
                     std::to_string(timeout.count()) + " ms; last lines of " + p.spec().log.string() + ":\n" +
                     p.log_tail());
}

bool NodeTableRuntime::tcp_connects(std::string_view node_name, const std::string& address,
                                    std::uint16_t port, std::chrono::milliseconds timeout) const {
  bool ok = false;
  run_in(node_name, [&] { ok = tcp_connect_within(address, port, timeout); });
  return ok;
}

std::vector<Process*> NodeTableRuntime::processes() const {
  std::lock_guard lock(mu_);
  return supervisor_ ? supervisor_->processes() : std::vector<Process*>{};
}

void NodeTableRuntime::stop_all(std::chrono::milliseconds grace) {
  std::unique_lock lock(mu_);
  Supervisor* s = supervisor_.get();
  lock.unlock();
  if (s) s->stop_all(grace);
}

void NodeTableRuntime::stop_processes() noexcept {
  try {
    stop_all(std::chrono::milliseconds(2000));
  } catch (...) {
    // Stopping is best effort here; the RunState's record lets `fencecheck clean` finish.
  }
}

void NodeTableRuntime::check_new_node_names(const std::vector<std::string>& names) const {
  static const std::regex pattern("^[a-z][a-z0-9]{0,15}$");
  if (!nodes_.empty()) throw HarnessError("Runtime::create called twice");
  if (names.empty()) throw HarnessError("Runtime::create: no nodes given");
  if (names.size() > 250) throw HarnessError("Runtime::create: more than 250 nodes");
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (!std::regex_match(n, pattern) || n == "hub") {
      throw HarnessError("bad node name '" + n +
                         "': use a lowercase letter then up to 15 letters or digits, not 'hub'");
    }
    if (!seen.insert(n).second) throw HarnessError("node '" + n + "' named twice");
  }
}

namespace {

class LocalRuntime final : public NodeTableRuntime {
 public:
  explicit LocalRuntime(RunState& state) : NodeTableRuntime(state) {}
  ~LocalRuntime() override { destroy(); }
  std::string_view kind() const override { return "local"; }

  void create(const std::vector<std::string>& node_names) override {
    check_new_node_names(node_names);
    for (const auto& n : node_names) nodes_.push_back({n, "127.0.0.1", ""});
  }

  std::uint16_t port(std::string_view node_name, std::string_view service,
                     std::uint16_t /*preferred*/) override {
    node(node_name);  // throws for an unknown node
    std::lock_guard lock(mu_);
    std::string key = std::string(node_name) + "/" + std::string(service);
    if (auto it = ports_.find(key); it != ports_.end()) return it->second;
    // The kernel may hand out a port again once its probe socket is closed.
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::uint16_t p = free_loopback_port();
      if (given_.insert(p).second) return ports_[key] = p;
    }
    throw HarnessError("cannot find a distinct free port for " + key);
  }

  void run_in(std::string_view node_name, const std::function<void()>& fn) const override {
    node(node_name);
    fn();
  }

  bool supports_partitions() const override { return false; }
  void cut(const Grudge&) override {
    throw HarnessError("network faults need the netns runtime (run as root)");
  }
  void heal() override {}
  void destroy() noexcept override { stop_processes(); }

 private:
  std::mutex mu_;
  std::map<std::string, std::uint16_t> ports_;
  std::set<std::uint16_t> given_;
};

}  // namespace

static std::optional<std::string> needs_root(const std::string& kind, const std::string& why) {
  if (::geteuid() == 0) return std::nullopt;
  return "the " + kind + " runtime needs root (" + why + "): run as root (or with sudo), or pass --runtime local";
}

const std::vector<RuntimeInfo>& runtime_registry() {
  static const std::vector<RuntimeInfo> registry = {
      {"docker",
       "one container of --docker-image per node on a per-run internal network; network faults by iptables "
       "inside each container, freezes by docker pause (root, a dockerd)",
       true, true, true, false, true, true,
       []() -> std::optional<std::string> {
         if (auto why = needs_root("docker", "it enters the containers' namespaces")) return why;
         return docker_unavailable();
       },
       [](const std::string& run_id, RunState& state, const OptionValues& opts) {
         return make_docker_runtime(run_id, state, opts.has("docker-image") ? opts.text("docker-image") : "fencecheck",
                                    docker_socket_from_environment(nullptr).value_or(""));
       },
       {declare_option("docker-image", OptionReader::kRun, OptionType::kText, "fencecheck", "",
                       "the image every node of the docker runtime runs (docker/build.sh makes it)")}},
      {"local", "every node is 127.0.0.1 with its own ports; no root, no network faults", false, false, true, true, true, true,
       [] { return std::optional<std::string>(); },
       [](const std::string&, RunState& state, const OptionValues&) -> std::unique_ptr<Runtime> {
         return std::make_unique<LocalRuntime>(state);
       }},
      {"netns", "one network namespace per node on a private bridge; network faults by iptables (root)", true, false,
       true, true, true, true,
       []() -> std::optional<std::string> {
         if (auto why = needs_root("netns", "it creates network namespaces")) return why;
         if (!os::find_executable("ip")) return "the netns runtime needs `ip`: " + os::install_hint("iproute2");
         return std::nullopt;
       },
       [](const std::string& run_id, RunState& state, const OptionValues&) {
         return make_netns_runtime(run_id, state);
       }},
      {"ssh",
       "one real host per node from --nodes-file, driven over OpenSSH (Jepsen's model); network faults by "
       "iptables in the run's own chain on each host",
       true, false, true, false, false, true,
       []() -> std::optional<std::string> {
         if (!os::find_executable("ssh")) return "the ssh runtime needs `ssh`: " + os::install_hint("openssh-client");
         return std::nullopt;
       },
       [](const std::string& run_id, RunState& state, const OptionValues& opts) {
         if (!opts.has("nodes-file") || opts.text("nodes-file").empty()) {
           throw HarnessError("--runtime ssh needs --nodes-file FILE (the hosts, one JSON object per line)");
         }
         return make_ssh_runtime(run_id, state, opts.text("nodes-file"));
       },
       {declare_option("nodes-file", OptionReader::kRun, OptionType::kText, "", "",
                       "the hosts of the ssh runtime: one JSON object per line (docs/runtimes.md)")}},
      {"external",
       "servers you already run (--endpoints); clients and the resource in namespaces as under netns, reaching "
       "the servers through the controller; client-side faults only (root)",
       true, false, true, true, true, false,
       []() -> std::optional<std::string> {
         if (auto why = needs_root("external", "its clients run in network namespaces")) return why;
         if (!os::find_executable("ip")) return "the external runtime needs `ip`: " + os::install_hint("iproute2");
         return std::nullopt;
       },
       [](const std::string& run_id, RunState& state, const OptionValues& opts) {
         if (!opts.has("endpoints") || opts.text("endpoints").empty()) {
           throw HarnessError("--runtime external needs --endpoints BACKEND=HOST:PORT[,HOST:PORT...]");
         }
         try {
           return make_external_runtime(run_id, state, parse_endpoints(opts.text("endpoints")).servers);
         } catch (const std::invalid_argument& e) {
           throw HarnessError(std::string("--endpoints: ") + e.what());
         }
       },
       {declare_option("endpoints", OptionReader::kRun, OptionType::kText, "", "",
                       "the servers of the external runtime: BACKEND=HOST:PORT[,HOST:PORT...] (docs/runtimes.md)")}},
  };
  return registry;
}

bool Runtime::group_maps(Process& p, const std::filesystem::path& path) {
  const std::string wanted = path.string();
  for (int pid : os::group_members(p.pid())) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    for (std::string line; std::getline(maps, line);) {
      if (line.size() >= wanted.size() && line.compare(line.size() - wanted.size(), wanted.size(), wanted) == 0) {
        return true;
      }
    }
  }
  return false;
}

ExternalEndpoints parse_endpoints(const std::string& text) {
  ExternalEndpoints e;
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw std::invalid_argument("expected BACKEND=HOST:PORT[,HOST:PORT...], got \"" + text + "\"");
  }
  e.backend = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  std::size_t at = 0;
  while (at <= rest.size()) {
    const auto comma = rest.find(',', at);
    const std::string item = rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const auto colon = item.rfind(':');
    in_addr ignored{};
    if (colon == std::string::npos || ::inet_pton(AF_INET, item.substr(0, colon).c_str(), &ignored) != 1) {
      throw std::invalid_argument("\"" + item + "\" is not IPV4-ADDRESS:PORT");
    }
    const std::string port = item.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p < 1 || p > 65535) {
      throw std::invalid_argument("\"" + item + "\": the port must be 1..65535");
    }
    e.servers.push_back({item.substr(0, colon), static_cast<std::uint16_t>(p)});
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return e;
}

std::vector<std::string> outside_server_nodes(std::size_t count) {
  std::vector<std::string> names;
  for (std::size_t i = 1; i <= count; ++i) names.push_back("n" + std::to_string(i));
  return names;
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
