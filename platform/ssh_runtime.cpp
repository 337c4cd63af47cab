// The ssh runtime: every node is a real host from the nodes file, driven over OpenSSH
// (Jepsen's model). Servers n1..nN take the hosts of role "server" in file order; the
// resource r1 and the clients c1..cK take those of role "client". Files the nodes need
// are uploaded into kRemoteBase/<run id>/<node>/ (nothing relies on a shared file system);
// the workers' control sockets ride the ssh connection; partitions are iptables rules in
// the run's own chain on each host. What the processes wrote there comes back on destroy().
//
// Deadlines: set-up steps (opening the masters, uploads for a spawn) take up to a minute and
// end at once on the run's interrupt check; everything the nemesis or the teardown asks
// takes the caller's deadline, so a silent host costs that deadline, never more.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "platform/nodes_file.h"
#include "platform/os_util.h"
#include "platform/remote_process.h"
#include "platform/run_state.h"
#include "platform/runtime_base.h"
#include "platform/runtime_registry.h"
#include "platform/ssh_files.h"
#include "platform/ssh_remote.h"

namespace fencecheck {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

// How long a set-up step on a host may take (opening its master, an upload): a minute,
// ended at once by the run's interrupt check. A readiness probe's forward: 2 s.
constexpr milliseconds kSetupStep{60000};
constexpr milliseconds kProbeForward{2000};

class SshRuntime final : public NodeTableRuntime {
 public:
  SshRuntime(std::string run_id, RunState& state, NodesFile hosts)
      : NodeTableRuntime(state),
        run_id_(std::move(run_id)),
        hosts_(std::move(hosts)),
        control_(RunState::state_dir() / ("ssh-" + run_id_)) {}
  ~SshRuntime() override { Runtime::destroy(); }

  std::string_view kind() const override { return "ssh"; }

  void share(const fs::path& path, bool writable) override { files_.share(path, writable); }

  void create(const std::vector<std::string>& node_names) override {
    check_new_node_names(node_names);
    assign_hosts(node_names);
    state_.add_path(control_);
    fs::create_directories(control_);
    ::chmod(control_.c_str(), 0700);
    std::vector<std::function<void()>> jobs;
    for (auto& [name, r] : remotes_) {
      jobs.push_back([this, &r = *r, name = name] {
        const Deadline deadline = setup_deadline();
        r.conn->open(&state_, control_ / (name + ".log"), deadline);
        // Idempotent, so that a transport failure can be retried: the chain is made unless
        // it exists, and jumped to unless INPUT jumps to it already.
        const std::string chain = remote_chain(run_id_);
        r.conn->check("mkdir -p " + shell_quote(r.root + "/pids") + " && { iptables -w -N " + chain +
                          " 2>/dev/null || iptables -w -n -L " + chain + " >/dev/null; } && { iptables -w -C INPUT -j " +
                          chain + " 2>/dev/null || iptables -w -I INPUT 1 -j " + chain + "; }",
                      "preparing node " + name + " (its run directory and iptables chain " + chain + ")", "",
                      deadline, Retry::kIdempotent);
        // The programs every node may run (the fencecheck binary), sent to all hosts at
        // once here rather than one host after another as each first starts a process.
        std::lock_guard order(r.mu);
        files_.upload_programs(r, deadline);
      });
    }
    run_in_parallel(jobs);
    for (const auto& name : node_names) nodes_.push_back({name, remotes_.at(name)->conn->host().address, ""});
  }

  std::uint16_t port(std::string_view node_name, std::string_view, std::uint16_t preferred) override {
    node(node_name);
    return preferred;
  }

  // Probes run here on the controller; probe_target() gives them a forwarded port.
  void run_in(std::string_view node_name, const std::function<void()>& fn) const override {
    node(node_name);
    fn();
  }

  HostPort probe_target(std::string_view node_name, const std::string& address, std::uint16_t port) override {
    return {"127.0.0.1", remote(node_name).conn->forward_tcp(address, port, Deadline::after(kProbeForward))};
  }

  // The host's own `timeout` ends the attempt; the ssh command gets 2 s more to answer.
  bool tcp_connects(std::string_view node_name, const std::string& address, std::uint16_t port,
                    milliseconds timeout) const override {
    const double seconds = std::max<double>(0.1, static_cast<double>(timeout.count()) / 1000.0);
    SshResult r = remote(node_name).conn->exec(
        "timeout " + std::to_string(seconds) + " bash -c " +
            shell_quote("exec 3<>/dev/tcp/" + address + "/" + std::to_string(port)) + " 2>/dev/null",
        "", Deadline::after(timeout + milliseconds(2000)), Retry::kIdempotent);
    return r.exit == 0;
  }

  std::vector<Process*> processes() const override {
    std::lock_guard lock(mu_);
    std::vector<Process*> all;
    for (const auto& p : processes_) all.push_back(p.get());
    return all;
  }

  // All at once: each stop waits on its own host (grace + 1 s at most), so a silent host
  // costs that once, not once per process.
  void stop_all(milliseconds grace) override {
    std::vector<std::function<void()>> stops;
    for (Process* p : processes()) stops.push_back([p, grace] { p->stop(grace); });
    run_in_parallel(stops);
    NodeTableRuntime::stop_all(grace);
  }

  // Each host holding a copy writes the change into it, all hosts at once.
  void file_changed(const fs::path& path, std::size_t bytes, const Deadline& deadline) override {
    std::vector<std::function<void()>> jobs;
    for (auto& [name, r] : remotes_) {
      jobs.push_back([&, &r = *r] { files_.write_in_place(r, path, bytes, deadline); });
    }
    run_in_parallel(jobs);
  }

  std::int64_t monotonic_offset_ns(std::string_view node_name, const Deadline& deadline) override {
    auto mono_ns = [] {  // steady_clock is CLOCK_MONOTONIC on Linux
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    const std::int64_t before = mono_ns();
    SshResult r = remote(node_name).conn->exec("cat /proc/uptime", "", deadline, Retry::kIdempotent);
    const std::int64_t after = mono_ns();
    double uptime_s = 0;
    if (r.exit != 0 || std::sscanf(r.out.c_str(), "%lf", &uptime_s) != 1) {
      throw HarnessError("cannot read /proc/uptime on " + std::string(node_name) + "'s host: " + r.out);
    }
    // uptime is cut to 10 ms steps: the middle of its step is the best guess (±5 ms + RTT/2).
    // An offset within that error is most likely none at all (a host on this kernel, as
    // the test fixture's are), whose clock is exactly ours.
    const std::int64_t offset = static_cast<std::int64_t>(uptime_s * 1e9) + 5000000 - (before + after) / 2;
    const std::int64_t error = 5000000 + (after - before) / 2 + 5000000;
    return std::llabs(offset) <= error ? 0 : offset;
  }

  bool group_maps(Process& p, const fs::path& path, const Deadline& deadline) override {
    auto* remote_process = dynamic_cast<RemoteProcess*>(&p);
    if (remote_process == nullptr) return false;
    return remote_process->group_maps(files_.translate(remote(p.spec().node), path.string(), nullptr), deadline);
  }


  // Each host that drops packets gets its chain rewritten whole by iptables-restore
  // --noflush: declaring the chain flushes only it, and the swap is atomic (and idempotent:
  // retried on a transport failure). A host that did not take its rules by the deadline is
  // returned, and rewritten by the next cut or heal.
  NetFailures cut(const Grudge& grudge, const Deadline& deadline) override {
    std::map<std::string, std::vector<std::string>> drops;
    for (const auto& [dst, srcs] : grudge) {
      node(dst);
      for (const auto& src : srcs) drops[dst].push_back(node(src).address);
    }
    std::map<std::string, std::function<void()>> jobs;
    std::lock_guard lock(cut_mu_);
    for (const auto& n : nodes_) {
      if (!drops.contains(n.name) && !cut_nodes_.contains(n.name)) continue;
      jobs[n.name] = [this, &deadline, name = n.name, sources = drops[n.name]] { set_chain(name, sources, deadline); };
    }
    cut_nodes_.clear();
    for (const auto& [dst, _] : drops) cut_nodes_.insert(dst);
    NetFailures failures = run_per_node(jobs);
    for (const auto& [name, _] : failures) cut_nodes_.insert(name);
    return failures;
  }

  NetFailures heal(const Deadline& deadline) override { return cut({}, deadline); }

  // Every host at once: its processes stopped, its files fetched, the run removed from it,
  // its master closed — each by the deadline; a host that stays silent is left to
  // `fencecheck clean --nodes-file` (a warning says so).
  void destroy(const Deadline& deadline) noexcept override {
    if (destroyed_) return;
    destroyed_ = true;
    stop_processes(deadline);
    std::vector<std::function<void()>> jobs;
    for (auto& [name, r] : remotes_) {
      jobs.push_back([this, &deadline, &r = *r, name = name] {
        try {
          fetch_and_remove(name, r, r.conn->silent() ? deadline.within(kSilentHostWait) : deadline);
        } catch (const std::exception& e) {
          std::cerr << "fencecheck: warning: " << e.what() << " (fencecheck clean --nodes-file "
                    << hosts_.path.string() << " retries)\n";
        }
        r.conn->close(deadline.within(milliseconds(2000)));
      });
    }
    run_in_parallel_noexcept(jobs);
    std::error_code ec;
    fs::remove_all(control_, ec);
    try {
      if (!ec) state_.remove_path(control_);
    } catch (...) {
    }
  }

 protected:
  Process& start(ProcessSpec spec) override;

 private:
  void assign_hosts(const std::vector<std::string>& names);
  SshNode& remote(std::string_view node_name) const;
  void set_chain(const std::string& node_name, const std::vector<std::string>& sources, const Deadline& deadline);
  // One round trip: the files the host's processes wrote come back, then the run is
  // removed from the host. When that fails, the removal alone is tried again (idempotent).
  void fetch_and_remove(const std::string& name, SshNode& r, const Deadline& deadline);
  Deadline setup_deadline() const { return Deadline::after(kSetupStep, interrupt_check()); }
  static void run_in_parallel_noexcept(const std::vector<std::function<void()>>& jobs) noexcept {
    try {
      run_in_parallel(jobs);
    } catch (...) {
    }
  }

  const std::string run_id_;
  const NodesFile hosts_;
  const fs::path control_;  // master sockets and their logs
  SshFiles files_;
  std::map<std::string, std::unique_ptr<SshNode>> remotes_;
  mutable std::mutex mu_;  // processes_, next_
  std::vector<std::unique_ptr<RemoteProcess>> processes_;
  int next_ = 0;
  std::mutex cut_mu_;
  std::set<std::string> cut_nodes_;
  bool destroyed_ = false;
};

void SshRuntime::assign_hosts(const std::vector<std::string>& names) {
  std::vector<std::string> servers, clients;
  for (const auto& n : names) (is_server_node(n) ? servers : clients).push_back(n);
  if (auto why = hosts_shortfall(hosts_, servers, clients)) throw HarnessError(*why);
  auto server_hosts = hosts_.with_role("server");
  auto client_hosts = hosts_.with_role("client");
  auto add = [&](const std::string& name, const SshHost& host) {
    auto r = std::make_unique<SshNode>();
    r->conn = std::make_unique<SshHostConnection>(host, control_ / name);
    r->root = std::string(kRemoteBase) + "/" + run_id_ + "/" + name;
    remotes_[name] = std::move(r);
  };
  for (std::size_t i = 0; i < servers.size(); ++i) add(servers[i], *server_hosts[i]);
  for (std::size_t i = 0; i < clients.size(); ++i) add(clients[i], *client_hosts[i]);
}

SshNode& SshRuntime::remote(std::string_view node_name) const {
  node(node_name);  // throws for an unknown node
  return *remotes_.at(std::string(node_name));
}

void SshRuntime::fetch_and_remove(const std::string& name, SshNode& r, const Deadline& deadline) {
  SshResult both;
  try {
    both = r.conn->exec("sh -s", files_.fetch_command(r) + "\n" + remote_run_removal_script(run_id_), deadline,
                        Retry::kNever);  // run twice, the second would find the files gone
  } catch (const HarnessError& e) {
    const std::string why = e.what();
    remove_remote_run(*r.conn, run_id_, r.conn->silent() ? deadline.within(kSilentHostWait) : deadline);
    throw HarnessError("fetching node " + name + "'s files: " + why);
  }
  try {
    files_.unpack(r, both.out, deadline);
  } catch (const std::exception& e) {
    std::cerr << "fencecheck: warning: fetching node " << name << "'s files: " << e.what() << "\n";
  }
  if (both.exit != 0) remove_remote_run(*r.conn, run_id_, deadline);
}

void SshRuntime::set_chain(const std::string& node_name, const std::vector<std::string>& sources,
                           const Deadline& deadline) {
  const std::string chain = remote_chain(run_id_);
  std::string rules = "*filter\n:" + chain + " - [0:0]\n";
  for (const auto& src : sources) rules += "-A " + chain + " -s " + src + "/32 -j DROP\n";
  rules += "COMMIT\n";
  remote(node_name).conn->check("iptables-restore -w --noflush", "setting the partition rules of " + node_name, rules,
                                deadline, Retry::kIdempotent);
}

Process& SshRuntime::start(ProcessSpec spec) {
  SshNode& r = remote(spec.node);
  const Deadline deadline = setup_deadline();
  std::lock_guard order(r.mu);  // one spawn at a time per node: uploads and pid files
  std::vector<fs::path> used;
  std::string command = "export FENCECHECK_RUN=" + run_id_ + "; ";
  int id = 0;
  {
    std::lock_guard lock(mu_);
    id = next_++;
  }
  files_.add_local_log(spec.log);
  const std::string pid_file = r.root + "/pids/" + std::to_string(id) + ".pid";
  std::string cwd = spec.cwd.empty() ? r.root : files_.translate(r, spec.cwd.string(), &used);
  command += "mkdir -p " + shell_quote(cwd) + " && cd " + shell_quote(cwd) + " && echo $$ > " + shell_quote(pid_file) +
             " && exec env --";
  for (const auto& [k, v] : spec.env) command += " " + shell_quote(k + "=" + files_.translate(r, v, &used));
  std::string preload;
  for (const auto& lib : spec.preload) preload += (preload.empty() ? "" : ":") + files_.translate(r, lib, &used);
  if (!preload.empty()) command += " " + shell_quote("LD_PRELOAD=" + preload);
  for (const auto& a : spec.argv) command += " " + shell_quote(files_.translate(r, a, &used));
  for (const auto& p : used) files_.upload(r, p, deadline);

  // Started once, by the local ssh client: a start is not idempotent, so never retried.
  ProcessSpec local;
  local.node = spec.node;
  local.name = spec.name;
  local.argv = r.conn->argv();
  local.argv.insert(local.argv.end() - 1, "-T");
  local.argv.push_back(command);
  local.log = spec.log;
  Process& client = supervise(local, {});
  auto p = std::make_unique<RemoteProcess>(spec, client, *r.conn, pid_file);
  for (const fs::path& socket : spec.control_sockets) {
    r.conn->forward_unix(socket, files_.translate(r, socket.string(), nullptr), deadline);
  }
  std::lock_guard lock(mu_);
  processes_.push_back(std::move(p));
  return *processes_.back();
}

}  // namespace

std::unique_ptr<Runtime> make_ssh_runtime(const std::string& run_id, RunState& state, const fs::path& nodes_file) {
  return std::make_unique<SshRuntime>(run_id, state, read_nodes_file(nodes_file));
}

}  // namespace fencecheck
