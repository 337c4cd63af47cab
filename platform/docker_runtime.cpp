// The docker runtime: one container per node, all on a per-run internal network, every
// container and the network labelled fencecheck.run=<run id>. A container's main process
// is `sleep infinity` (no init system, no sshd): the controller starts every server and
// worker itself, entering the container's namespaces and cgroups (launch.h), so that each
// stays a supervised child of the controller. Partitions are iptables rules inside each
// container's network namespace (NamespacedRuntime); a freeze is `docker pause`.
#include <fstream>
#include <iostream>

#include "platform/cleanup.h"
#include "platform/docker_api.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_base.h"

namespace fencecheck {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRunLabel = "fencecheck.run";

std::string label_filter(const std::string& label) {
  return DockerApi::url_encode(nlohmann::json({{"label", {label}}}).dump());
}

// The cgroup directories of pid, as the controller sees them: one per v1 hierarchy, or the
// unified one. A container's processes must join all of them for docker pause to reach them.
std::vector<fs::path> cgroups_of(int pid) {
  std::vector<fs::path> dirs;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(in, line);) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers.rfind("name=", 0) == 0) controllers = controllers.substr(5);
    fs::path dir = controllers.empty() ? fs::path("/sys/fs/cgroup/unified") : fs::path("/sys/fs/cgroup") / controllers;
    if (controllers.empty() && !fs::exists(dir)) dir = "/sys/fs/cgroup";  // pure v2
    dir += path;
    if (fs::exists(dir / "cgroup.procs")) dirs.push_back(dir);
  }
  return dirs;
}

class DockerRuntime final : public NamespacedRuntime {
 public:
  DockerRuntime(std::string run_id, RunState& state, std::string image, std::string socket)
      : NamespacedRuntime(state),
        run_id_(std::move(run_id)),
        image_(std::move(image)),
        api_(std::move(socket)),
        network_("fc-" + run_id_),
        subnet_(run_subnet(run_id_)) {}
  ~DockerRuntime() override { Runtime::destroy(); }

  std::string_view kind() const override { return "docker"; }

  void share(const fs::path& path, bool writable) override {
    fs::path p = fs::absolute(path);
    binds_.push_back(p.string() + ":" + p.string() + (writable ? ":rw" : ":ro"));
  }

  void create(const std::vector<std::string>& node_names) override {
    check_new_node_names(node_names);
    auto image = api_.request("GET", "/images/" + DockerApi::url_encode(image_) + "/json", nullptr,
                              std::chrono::seconds(10));
    if (image.status == 404) {
      throw HarnessError("the docker image " + image_ + " is not in the dockerd at " + api_.socket_path() +
                         ": build it with docker/build.sh (or name another with --docker-image)");
    }
    state_.add_docker_daemon(api_.socket_path());
    recorded_ = true;
    const nlohmann::json labels = {{kRunLabel, run_id_}};
    api_.call("creating the run's network", "POST", "/networks/create",
              {{"Name", network_},
               {"Driver", "bridge"},
               {"Internal", true},
               {"CheckDuplicate", true},
               {"Labels", labels},
               {"IPAM", {{"Config", {{{"Subnet", subnet_ + "0/24"}, {"Gateway", subnet_ + "254"}}}}}}});
    std::vector<Node> planned;
    for (std::size_t i = 0; i < node_names.size(); ++i) {
      planned.push_back({node_names[i], subnet_ + std::to_string(i + 1), ""});
    }
    containers_.resize(planned.size());
    // In parallel: a container takes about half a second to create and start.
    std::vector<std::function<void()>> starters;
    for (std::size_t i = 0; i < planned.size(); ++i) {
      starters.emplace_back([&, i] { containers_[i] = start_container(planned[i]); });
    }
    run_in_parallel(starters);
    nodes_ = std::move(planned);
  }

  std::uint16_t port(std::string_view node_name, std::string_view, std::uint16_t preferred) override {
    node(node_name);
    return preferred;
  }

  bool supports_freeze() const override { return true; }
  void freeze(std::string_view node_name, const Deadline& deadline) override {
    pause_call(node_name, "pause", deadline);
  }
  void thaw(std::string_view node_name, const Deadline& deadline) override {
    pause_call(node_name, "unpause", deadline);
  }

  // dockerd is this machine's: its API answers or fails at once, so the deadline only
  // bounds the processes' stops (a silent daemon is bounded by each request's timeout).
  void destroy(const Deadline& deadline) noexcept override {
    stop_processes(deadline);
    if (!recorded_) return;
    CleanReport report;
    try {
      cleanup::remove_docker_run(api_.socket_path(), run_id_, report);
    } catch (const std::exception& e) {
      report.errors.push_back(e.what());
    }
    for (const auto& e : report.errors) std::cerr << "fencecheck: warning: " << e << " (run `fencecheck clean`)\n";
    if (report.errors.empty()) {
      try {
        state_.remove_docker_daemon(api_.socket_path());
      } catch (const std::exception& e) {
        std::cerr << "fencecheck: warning: " << e.what() << "\n";
      }
    }
    recorded_ = false;
    containers_.clear();
    forget_rules();
  }

 protected:
  std::string netns_path(const Node& n) const override { return proc(n) + "/ns/net"; }
  NodeEntry entry(const Node& n) const override {
    const std::string p = proc(n);
    return {{p + "/ns/ipc", p + "/ns/uts", p + "/ns/net", p + "/ns/mnt"}, container(n).cgroups, p + "/root",
            p + "/ns/pid"};
  }

 private:
  struct Container {
    std::string id;
    int pid = 0;  // its main process, on the host
    std::vector<fs::path> cgroups;
  };

  Container start_container(const Node& n) {
    const std::string what = "starting the container of node " + n.name;
    nlohmann::json body = {
        {"Image", image_},
        {"Entrypoint", {"sleep"}},
        {"Cmd", {"infinity"}},
        {"Hostname", n.name},
        {"Labels", {{kRunLabel, run_id_}, {"fencecheck.node", n.name}}},
        {"HostConfig", {{"NetworkMode", network_}, {"Binds", binds_}}},
        {"NetworkingConfig",
         {{"EndpointsConfig", {{network_, {{"IPAMConfig", {{"IPv4Address", n.address}}}}}}}}}};
    auto created = api_.call(what, "POST", "/containers/create?name=fc-" + run_id_ + "-" + n.name, body);
    Container c;
    c.id = created.at("Id").get<std::string>();
    api_.call(what, "POST", "/containers/" + c.id + "/start");
    auto inspected = api_.call(what, "GET", "/containers/" + c.id + "/json");
    c.pid = inspected.at("State").value("Pid", 0);
    if (c.pid <= 0) throw HarnessError(what + ": it is not running (" + inspected.at("State").dump() + ")");
    c.cgroups = cgroups_of(c.pid);
    return c;
  }

  const Container& container(const Node& n) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].name == n.name) return containers_.at(i);
    }
    throw HarnessError("node " + n.name + " has no container");
  }
  std::string proc(const Node& n) const { return "/proc/" + std::to_string(container(n).pid); }

  void pause_call(std::string_view node_name, const std::string& verb, const Deadline& deadline) {
    const Container& c = container(node(node_name));
    api_.call(verb + " of node " + std::string(node_name), "POST", "/containers/" + c.id + "/" + verb, nullptr,
              std::max(deadline.left(), std::chrono::milliseconds(1)));
  }

  std::string run_id_, image_;
  DockerApi api_;
  std::string network_, subnet_;
  std::vector<std::string> binds_;
  std::vector<Container> containers_;  // containers_[i] is nodes_[i]'s
  bool recorded_ = false;              // the daemon is in the RunState: destroy removes the run's objects
};

}  // namespace

std::optional<std::string> docker_unavailable() {
  std::string why;
  auto socket = docker_socket_from_environment(&why);
  if (!socket) return "the docker runtime: " + why;
  if (!DockerApi(*socket).ping()) {
    return "the docker runtime needs a docker daemon, and none answers on " + *socket +
           ": start one (apt-get install docker.io; dockerd), or point DOCKER_HOST=unix://… at one";
  }
  return std::nullopt;
}

std::unique_ptr<Runtime> make_docker_runtime(const std::string& run_id, RunState& state, const std::string& image,
                                             const std::string& socket) {
  return std::make_unique<DockerRuntime>(run_id, state, image, socket);
}

namespace cleanup {

void remove_docker_run(const std::string& socket, const std::string& run_id, CleanReport& report,
                       const std::function<bool(const std::string&)>& keep_run) {
  DockerApi api(socket);
  const std::string filter = label_filter(run_id.empty() ? std::string(kRunLabel) : std::string(kRunLabel) + "=" + run_id);
  auto wanted = [&](const nlohmann::json& labels) {
    std::string id = labels.is_object() ? labels.value(kRunLabel, "") : "";
    return !run_id.empty() || !keep_run || !keep_run(id);
  };
  // Containers first: a network is removable once nothing is attached to it.
  struct Kind {
    const char* noun;
    std::string list, remove_path, remove_query;
  };
  for (const Kind& kind : {Kind{"container", "/containers/json?all=1&filters=", "/containers/", "?force=1&v=1"},
                           Kind{"network", "/networks?filters=", "/networks/", ""}}) {
    auto objects = api.call(std::string("listing the run's ") + kind.noun + "s", "GET", kind.list + filter);
    for (const auto& o : objects) {
      if (!wanted(o.value("Labels", nlohmann::json()))) continue;
      const std::string id = o.value("Id", "");
      const std::string name = kind.noun == std::string("network") ? o.value("Name", id) : id.substr(0, 12);
      auto r = api.request("DELETE", kind.remove_path + id + kind.remove_query);
      if (r.status == 204) {
        report.removed.push_back(std::string("removed ") + kind.noun + " " + name + " (docker at " + socket + ")");
      } else if (r.status != 404) {  // 404: gone already
        report.errors.push_back(std::string(kind.noun) + " " + name + ": docker answered " +
                                std::to_string(r.status) + ": " + r.body);
      }
    }
  }
}

}  // namespace cleanup

}  // namespace fencecheck
