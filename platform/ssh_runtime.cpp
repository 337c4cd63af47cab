// The ssh runtime: every node is a real host from the nodes file, driven over OpenSSH
// (Jepsen's model). Servers n1..nN take the hosts of role "server" in file order; the
// resource r1 and the clients c1..cK take those of role "client". Files the nodes need
// are uploaded into kRemoteBase/<run id>/<node>/ (nothing relies on a shared file system);
// the workers' control sockets ride the ssh connection; partitions are iptables rules in
// the run's own chain on each host. What the processes wrote there comes back on destroy().
#include <arpa/inet.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "platform/nodes_file.h"
#include "platform/os_util.h"
#include "platform/remote_process.h"
#include "platform/run_state.h"
#include "platform/runtime_base.h"
#include "platform/ssh_remote.h"

namespace fencecheck {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SshRuntime final : public NodeTableRuntime {
 public:
  SshRuntime(std::string run_id, RunState& state, NodesFile hosts)
      : NodeTableRuntime(state),
        run_id_(std::move(run_id)),
        hosts_(std::move(hosts)),
        control_(RunState::state_dir() / ("ssh-" + run_id_)) {}
  ~SshRuntime() override { destroy(); }

  std::string_view kind() const override { return "ssh"; }

  void share(const fs::path& path, bool writable) override {
    fs::path p = fs::absolute(path).lexically_normal();
    shares_.push_back({p, writable, "s" + std::to_string(shares_.size()) + "/" + p.filename().string()});
  }

  void create(const std::vector<std::string>& node_names) override {
    check_new_node_names(node_names);
    assign_hosts(node_names);
    state_.add_path(control_);
    fs::create_directories(control_);
    ::chmod(control_.c_str(), 0700);
    std::vector<std::function<void()>> jobs;
    for (auto& [name, r] : remotes_) {
      jobs.push_back([this, &r = *r, name = name] {
        r.conn->open(&state_, control_ / (name + ".log"));
        const std::string chain = remote_chain(run_id_);
        r.conn->check("mkdir -p " + shell_quote(r.root + "/pids") + " && iptables -w -N " + chain +
                          " && iptables -w -I INPUT 1 -j " + chain,
                      "preparing node " + name + " (its run directory and iptables chain " + chain + ")");
        // The programs every node may run (the fencecheck binary), sent to all hosts at
        // once here rather than one host after another as each first starts a process.
        for (const auto& share : shares_) {
          std::error_code ec;
          if (!share.writable && fs::is_regular_file(share.local, ec)) upload_file(r, share.local, share);
        }
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
    return {"127.0.0.1", remote(node_name).conn->forward_tcp(address, port)};
  }

  bool tcp_connects(std::string_view node_name, const std::string& address, std::uint16_t port,
                    milliseconds timeout) const override {
    const double seconds = std::max<double>(0.1, static_cast<double>(timeout.count()) / 1000.0);
    SshResult r = remote(node_name).conn->exec(
        "timeout " + std::to_string(seconds) + " bash -c " +
        shell_quote("exec 3<>/dev/tcp/" + address + "/" + std::to_string(port)) + " 2>/dev/null");
    return r.exit == 0;
  }

  std::vector<Process*> processes() const override {
    std::lock_guard lock(mu_);
    std::vector<Process*> all;
    for (const auto& p : processes_) all.push_back(p.get());
    return all;
  }

  void stop_all(milliseconds grace) override {
    std::vector<Process*> running = processes();
    for (auto it = running.rbegin(); it != running.rend(); ++it) (*it)->stop(grace);
    NodeTableRuntime::stop_all(grace);
  }

  // The nodes' copies of a changed file are written in place (`dd conv=notrunc`: the same
  // inode, which the processes that mapped it keep); a host that never got the file is
  // skipped: a process started there later gets it whole.
  void file_changed(const fs::path& path, std::size_t bytes) override {
    std::string content = read_all(path).substr(0, bytes);
    std::vector<std::function<void()>> jobs;
    for (auto& [name, r] : remotes_) {
      jobs.push_back([&, &r = *r] {
        std::lock_guard order(r.mu);
        auto it = r.sent.find(path.string());
        if (it == r.sent.end()) return;
        r.conn->check("dd of=" + shell_quote(translate(r, path.string(), nullptr)) + " bs=" + std::to_string(bytes) +
                          " count=1 iflag=fullblock conv=notrunc status=none",
                      "writing " + path.string() + " in place", content);
        std::error_code ec;
        it->second = {fs::file_size(path, ec), fs::last_write_time(path, ec)};
      });
    }
    run_in_parallel(jobs);
  }

  std::int64_t monotonic_offset_ns(std::string_view node_name) override {
    auto mono_ns = [] {  // steady_clock is CLOCK_MONOTONIC on Linux
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    const std::int64_t before = mono_ns();
    SshResult r = remote(node_name).conn->exec("cat /proc/uptime");
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

  bool group_maps(Process& p, const fs::path& path) override {
    auto* remote_process = dynamic_cast<RemoteProcess*>(&p);
    if (remote_process == nullptr) return false;
    return remote_process->group_maps(translate(remote(p.spec().node), path.string(), nullptr));
  }

  bool supports_partitions() const override { return true; }

  // Each host that drops packets gets its chain rewritten whole by iptables-restore
  // --noflush: declaring the chain flushes only it, and the swap is atomic.
  void cut(const Grudge& grudge) override {
    std::map<std::string, std::vector<std::string>> drops;
    for (const auto& [dst, srcs] : grudge) {
      node(dst);
      for (const auto& src : srcs) drops[dst].push_back(node(src).address);
    }
    std::vector<std::function<void()>> jobs;
    std::lock_guard lock(cut_mu_);
    for (const auto& n : nodes_) {
      if (!drops.contains(n.name) && !cut_nodes_.contains(n.name)) continue;
      jobs.push_back([this, name = n.name, sources = drops[n.name]] { set_chain(name, sources); });
    }
    cut_nodes_.clear();
    for (const auto& [dst, _] : drops) cut_nodes_.insert(dst);
    run_in_parallel(jobs);
  }

  void heal() override { cut({}); }

  void destroy() noexcept override {
    if (destroyed_) return;
    destroyed_ = true;
    stop_processes();
    std::vector<std::function<void()>> jobs;
    for (auto& [name, r] : remotes_) {
      jobs.push_back([this, &r = *r, name = name] {
        try {
          fetch(r);
        } catch (const std::exception& e) {
          std::cerr << "fencecheck: warning: fetching node " << name << "'s files: " << e.what() << "\n";
        }
        try {
          remove_remote_run(*r.conn, run_id_);
        } catch (const std::exception& e) {
          std::cerr << "fencecheck: warning: " << e.what() << " (fencecheck clean --nodes-file "
                    << hosts_.path.string() << " retries)\n";
        }
        r.conn->close();
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
  struct Share {
    fs::path local;
    bool writable;
    std::string remote;  // relative to the node's root
  };
  struct Remote {
    std::unique_ptr<SshHostConnection> conn;
    std::string root;  // kRemoteBase/<run>/<node>
    std::mutex mu;     // sent, spawn order
    std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> sent;
    std::set<std::string> made;  // directories made on the host (a restart makes none again)
  };

  void assign_hosts(const std::vector<std::string>& names);
  Remote& remote(std::string_view node_name) const;
  // text with every shared path rewritten to where node's host has it; each path found is
  // added to used.
  std::string translate(const Remote& r, const std::string& text, std::vector<fs::path>* used) const;
  const Share* share_of(const fs::path& p) const;
  void upload(Remote& r, const fs::path& local);
  void upload_file(Remote& r, const fs::path& local, const Share& share);
  void fetch(Remote& r);
  void set_chain(const std::string& node_name, const std::vector<std::string>& sources);
  static void run_in_parallel_noexcept(const std::vector<std::function<void()>>& jobs) noexcept {
    try {
      run_in_parallel(jobs);
    } catch (...) {
    }
  }

  const std::string run_id_;
  const NodesFile hosts_;
  const fs::path control_;  // master sockets and their logs
  std::vector<Share> shares_;
  std::map<std::string, std::unique_ptr<Remote>> remotes_;
  mutable std::mutex mu_;  // processes_, logs_, next_
  std::vector<std::unique_ptr<RemoteProcess>> processes_;
  std::set<fs::path> logs_;  // the local logs of spawned processes: never uploaded
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
    auto r = std::make_unique<Remote>();
    r->conn = std::make_unique<SshHostConnection>(host, control_ / name);
    r->root = std::string(kRemoteBase) + "/" + run_id_ + "/" + name;
    remotes_[name] = std::move(r);
  };
  for (std::size_t i = 0; i < servers.size(); ++i) add(servers[i], *server_hosts[i]);
  for (std::size_t i = 0; i < clients.size(); ++i) add(clients[i], *client_hosts[i]);
}

SshRuntime::Remote& SshRuntime::remote(std::string_view node_name) const {
  node(node_name);  // throws for an unknown node
  return *remotes_.at(std::string(node_name));
}

const SshRuntime::Share* SshRuntime::share_of(const fs::path& p) const {
  const std::string s = p.string();
  for (const auto& share : shares_) {
    const std::string root = share.local.string();
    if (s == root || (s.size() > root.size() && s.compare(0, root.size(), root) == 0 && s[root.size()] == '/')) {
      return &share;
    }
  }
  return nullptr;
}

std::string SshRuntime::translate(const Remote& r, const std::string& text, std::vector<fs::path>* used) const {
  std::string out = text;
  for (const auto& share : shares_) {
    const std::string from = share.local.string();
    const std::string to = r.root + "/" + share.remote;
    for (std::size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size())) {
      const std::size_t end = at + from.size();
      if (end < out.size() && out[end] != '/' && out[end] != ':' && out[end] != '\n' && out[end] != ' ') continue;
      if (used != nullptr) {
        std::size_t stop = out.find_first_of(": \n\"'", end);
        used->push_back(fs::path(out.substr(at, stop == std::string::npos ? std::string::npos : stop - at)));
      }
      out.replace(at, from.size(), to);
    }
  }
  return out;
}

void SshRuntime::upload(Remote& r, const fs::path& local) {
  const Share* share = share_of(local);
  if (share == nullptr) return;
  auto make_dir = [&](const fs::path& dir) {
    const std::string remote_dir = translate(r, dir.string(), nullptr);
    if (r.made.contains(remote_dir)) return;
    r.conn->check("mkdir -p " + shell_quote(remote_dir), "creating a directory");
    r.made.insert(remote_dir);
  };
  std::error_code ec;
  if (fs::is_regular_file(local, ec)) {
    upload_file(r, local, *share);
  } else if (fs::is_directory(local, ec)) {
    make_dir(local);
    for (const auto& entry : fs::recursive_directory_iterator(local, ec)) {
      if (entry.is_directory()) {
        make_dir(entry.path());
      } else if (entry.is_regular_file()) {
        upload_file(r, entry.path(), *share);
      }
    }
  } else {
    make_dir(local.parent_path());
  }
}

void SshRuntime::upload_file(Remote& r, const fs::path& local, const Share& share) {
  {
    std::lock_guard lock(mu_);
    if (logs_.contains(local)) return;  // a log streams back; the host never needs it
  }
  std::error_code ec;
  auto stamp = std::pair{fs::file_size(local, ec), fs::last_write_time(local, ec)};
  if (ec) return;
  if (auto it = r.sent.find(local.string()); it != r.sent.end() && it->second == stamp) return;
  std::string content = read_all(local);
  // A config written for the node names shared paths (redis's dir, zoo.cfg's dataDir):
  // they are rewritten like argv. Binaries (the read-only shares) are sent as they are.
  if (share.writable && content.find('\0') == std::string::npos) content = translate(r, content, nullptr);
  const std::string target = translate(r, local.string(), nullptr);
  const std::string mode = (fs::status(local, ec).permissions() & fs::perms::owner_exec) != fs::perms::none ? "755" : "644";
  r.conn->check("mkdir -p " + shell_quote(fs::path(target).parent_path().string()) + " && cat > " +
                    shell_quote(target + ".up") + " && chmod " + mode + " " + shell_quote(target + ".up") +
                    " && mv " + shell_quote(target + ".up") + " " + shell_quote(target),
                "uploading " + local.string(), content, milliseconds(60000));
  r.sent[local.string()] = stamp;
}

// Brings back what the host's processes wrote under the writable shares, as a tar stream;
// a file the controller has already (a config it wrote, a log streamed back) is kept.
void SshRuntime::fetch(Remote& r) {
  for (const auto& share : shares_) {
    if (!share.writable) continue;
    const std::string dir = r.root + "/" + share.remote;
    SshResult tar = r.conn->exec("[ -d " + shell_quote(dir) + " ] || exit 0; cd " + shell_quote(dir) +
                                     " && find . -type f \\( -name '*.log' -o -name '*.jsonl' -o -name '*.json' \\) "
                                     "-print0 | tar --null -T - -cf -",
                                 "", milliseconds(60000));
    if (tar.exit != 0 || tar.out.empty()) continue;
    auto x = os::run_command({"tar", "--skip-old-files", "-xf", "-", "-C", share.local.string()}, tar.out,
                             milliseconds(60000));
    if (x.status != 0) throw HarnessError("unpacking the files of " + r.root + ": " + x.output);
  }
}

void SshRuntime::set_chain(const std::string& node_name, const std::vector<std::string>& sources) {
  const std::string chain = remote_chain(run_id_);
  std::string rules = "*filter\n:" + chain + " - [0:0]\n";
  for (const auto& src : sources) rules += "-A " + chain + " -s " + src + "/32 -j DROP\n";
  rules += "COMMIT\n";
  remote(node_name).conn->check("iptables-restore -w --noflush", "setting the partition rules of " + node_name, rules);
}

Process& SshRuntime::start(ProcessSpec spec) {
  Remote& r = remote(spec.node);
  std::lock_guard order(r.mu);  // one spawn at a time per node: uploads and pid files
  std::vector<fs::path> used;
  std::string command = "export FENCECHECK_RUN=" + run_id_ + "; ";
  int id = 0;
  {
    std::lock_guard lock(mu_);
    id = next_++;
    logs_.insert(fs::absolute(spec.log).lexically_normal());
  }
  const std::string pid_file = r.root + "/pids/" + std::to_string(id) + ".pid";
  std::string cwd = spec.cwd.empty() ? r.root : translate(r, spec.cwd.string(), &used);
  command += "mkdir -p " + shell_quote(cwd) + " && cd " + shell_quote(cwd) + " && echo $$ > " + shell_quote(pid_file) +
             " && exec env --";
  for (const auto& [k, v] : spec.env) command += " " + shell_quote(k + "=" + translate(r, v, &used));
  std::string preload;
  for (const auto& lib : spec.preload) preload += (preload.empty() ? "" : ":") + translate(r, lib, &used);
  if (!preload.empty()) command += " " + shell_quote("LD_PRELOAD=" + preload);
  for (const auto& a : spec.argv) command += " " + shell_quote(translate(r, a, &used));
  for (const auto& p : used) upload(r, p);

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
    r.conn->forward_unix(socket, translate(r, socket.string(), nullptr));
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
