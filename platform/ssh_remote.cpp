#include "platform/ssh_remote.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <thread>

#include "platform/errors.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/tcp.h"

namespace fencecheck {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr int kTransportFailure = 255;  // ssh's own exit code for "could not run it"

// Runs attempt() until it says done, again after a transport failure only while `retry`
// allows it and the deadline lasts (100 ms, 200 ms, 400 ms … apart). Returns the last
// attempt's result; `why` says why the last one failed.
template <typename Attempt>
os::CommandResult attempts(const Deadline& deadline, Retry retry, Attempt attempt, std::string& why) {
  os::CommandResult r;
  for (int n = 0;; ++n) {
    if (n > 0 && !deadline.sleep(std::chrono::milliseconds(100 << std::min(n - 1, 4)))) return r;
    r = attempt();
    if (r.timed_out) {
      why = r.cancelled ? "given up (the run is ending)" : "no answer within " + deadline.budget_text();
      return r;  // it may still be running there: never run it again
    }
    if (r.status != kTransportFailure || retry == Retry::kNever || deadline.expired()) return r;
  }
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

SshHostConnection::SshHostConnection(SshHost host, fs::path control_path)
    : host_(std::move(host)), control_path_(std::move(control_path)) {}

SshHostConnection::~SshHostConnection() { close(Deadline::after(milliseconds(5000))); }

std::vector<std::string> SshHostConnection::argv() const {
  std::vector<std::string> a = {"ssh",
                                "-o", "BatchMode=yes",
                                "-o", "ConnectTimeout=5",
                                "-o", "ServerAliveInterval=2",
                                "-o", "ServerAliveCountMax=3",
                                "-o", "LogLevel=ERROR",
                                "-o", "ControlMaster=no",
                                "-o", "ControlPath=" + control_path_.string(),
                                "-o", "StreamLocalBindUnlink=yes",
                                "-p", std::to_string(host_.port),
                                "-l", host_.user};
  if (!host_.key.empty()) a.insert(a.end(), {"-i", host_.key, "-o", "IdentitiesOnly=yes"});
  if (!host_.known_hosts.empty()) {
    a.insert(a.end(), {"-o", "UserKnownHostsFile=" + host_.known_hosts, "-o", "StrictHostKeyChecking=yes"});
  } else {
    a.insert(a.end(), {"-o", "StrictHostKeyChecking=accept-new"});
  }
  if (!host_.proxy_command.empty()) a.insert(a.end(), {"-o", "ProxyCommand=" + host_.proxy_command});
  a.push_back(host_.host);
  return a;
}

void SshHostConnection::open(RunState* state, const fs::path& log, const Deadline& deadline) {
  std::vector<std::string> master = argv();
  master.insert(master.end() - 1, {"-M", "-N", "-f", "-o", "ControlMaster=yes", "-o", "ControlPersist=120"});
  // The master lives on in the background with whatever output it was given: a log file,
  // never run_command's pipe, which would then stay open.
  std::vector<std::string> sh = {"sh", "-c", "exec \"$@\" >>" + shell_quote(log.string()) + " 2>&1", "ssh"};
  sh.insert(sh.end(), master.begin(), master.end());
  std::string why;
  // A second master over the same socket path fails harmlessly: opening is idempotent.
  os::CommandResult r = attempts(deadline, Retry::kIdempotent, [&] { return os::run_command(sh, "", deadline); }, why);
  if (r.status != 0) {
    throw HarnessError("cannot open an ssh connection to " + host_.name + " (" + host_.user + "@" + host_.host + ":" +
                       std::to_string(host_.port) + ", nodes file line " + std::to_string(host_.line) +
                       "): " + (why.empty() ? trimmed(os::file_tail(log.string(), 5)) : why) +
                       "; check it with `fencecheck preflight --nodes-file FILE`");
  }
  open_ = true;
  std::vector<std::string> check = argv();
  check.insert(check.end() - 1, {"-O", "check"});
  auto out = os::run_command(check, "", deadline).output;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(pid=(\d+))"))) {
    int pid = std::stoi(m[1]);
    if (state != nullptr && ::getpgid(pid) == pid) {  // ssh -f made it a session leader
      state->add_process_group(pid);
      state_ = state;
      master_pid_ = pid;
    }
  }
}

SshResult SshHostConnection::exec(const std::string& command, const std::string& input, const Deadline& deadline,
                                  Retry retry) const {
  std::vector<std::string> a = argv();
  a.insert(a.end() - 1, "-T");
  a.push_back(command);
  std::string why;
  os::CommandResult r = attempts(deadline, retry, [&] { return os::run_command(a, input, deadline); }, why);
  if (r.timed_out && !r.cancelled) silent_ = true;
  if (!r.timed_out && r.status != kTransportFailure && r.status >= 0) {
    silent_ = false;
    return {r.status, std::move(r.output)};
  }
  if (why.empty()) why = r.status < 0 ? "given up (the run is ending)" : trimmed(r.output);
  throw HarnessError("ssh to " + host_.name + " (" + host_.host + ") failed: " + why);
}

std::string SshHostConnection::check(const std::string& command, const std::string& what, const std::string& input,
                                     const Deadline& deadline, Retry retry) const {
  SshResult r = exec(command, input, deadline, retry);
  if (r.exit != 0) {
    throw HarnessError(what + " on " + host_.name + " (" + host_.host + ") failed with exit code " +
                       std::to_string(r.exit) + ": " + trimmed(r.out));
  }
  return r.out;
}

void SshHostConnection::forward_unix(const fs::path& local, const std::string& remote, const Deadline& deadline) const {
  std::vector<std::string> a = argv();
  a.insert(a.end() - 1, {"-O", "forward", "-L", local.string() + ":" + remote});
  auto r = os::run_command(a, "", deadline);
  if (r.status != 0) {
    throw HarnessError("cannot forward " + local.string() + " to " + remote + " on " + host_.name + ": " +
                       trimmed(r.output));
  }
}

std::uint16_t SshHostConnection::forward_tcp(const std::string& address, std::uint16_t port, const Deadline& deadline) {
  const std::string target = address + ":" + std::to_string(port);
  std::lock_guard lock(mu_);
  for (const auto& [t, local] : forwards_) {
    if (t == target) return local;
  }
  std::string last;
  for (int attempt = 0; attempt < 3 && !deadline.expired(); ++attempt) {  // the free port may be taken meanwhile
    std::uint16_t local = free_loopback_port();
    std::vector<std::string> a = argv();
    a.insert(a.end() - 1, {"-O", "forward", "-L", "127.0.0.1:" + std::to_string(local) + ":" + target});
    auto r = os::run_command(a, "", deadline);
    if (r.status == 0) {
      forwards_.emplace_back(target, local);
      return local;
    }
    last = trimmed(r.output);
  }
  throw HarnessError("cannot forward a port to " + target + " through " + host_.name + ": " + last);
}

void SshHostConnection::close(const Deadline& deadline) noexcept {
  if (!open_) return;
  open_ = false;
  try {
    std::vector<std::string> a = argv();
    a.insert(a.end() - 1, {"-O", "exit"});
    // When the master does not confirm, its record stays: ~RunState or clean kills it.
    if (os::run_command(a, "", deadline).status == 0 && state_ != nullptr) {
      state_->remove_process_group(master_pid_);
    }
  } catch (...) {
    // The master ends by itself 120 s after its last session anyway (ControlPersist).
  }
}

void close_ssh_masters_in(const fs::path& dir) noexcept {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    try {
      os::run_command({"ssh", "-o", "ControlPath=" + entry.path().string(), "-O", "exit", "fencecheck-master"}, "",
                      milliseconds(5000));
    } catch (...) {
    }
  }
}

}  // namespace fencecheck

namespace fencecheck {

std::string remote_chain(const std::string& run_id) { return "fc-" + run_id; }

std::vector<std::string> remote_run_ids(const SshHostConnection& host, const Deadline& deadline) {
  const std::string listing = host.check(
      std::string("ls -1 ") + kRemoteBase + " 2>/dev/null; iptables -w -S 2>/dev/null | sed -n 's/^-N fc-\\([0-9a-f]\\{6\\}\\)$/\\1/p'; true",
      "listing fencecheck's runs", "", deadline, Retry::kIdempotent);
  std::vector<std::string> ids;
  std::istringstream in(listing);
  for (std::string id; std::getline(in, id);) {
    if (RunState::valid_run_id(id) && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

std::string remote_run_removal_script(const std::string& run_id) {
  if (!RunState::valid_run_id(run_id)) throw HarnessError("remove_remote_run: bad run id " + run_id);
  const std::string chain = remote_chain(run_id);
  // Processes are found by their working directory (each starts in the run's directory)
  // or their environment (redis-server overwrites its own with its title), so grandchildren
  // that left the group and processes whose pid file was never written go too. One find
  // and one grep over /proc: a fork per process took a second per host.
  return "id=" + run_id + "\n"
         "pids=$( { find /proc -mindepth 2 -maxdepth 2 -name cwd -lname \"" + std::string(kRemoteBase) +
         "/$id/*\" 2>/dev/null\n"
         "  grep -l -a -z -x \"FENCECHECK_RUN=$id\" /proc/[0-9]*/environ 2>/dev/null; } |\n"
         "  sed -n 's|^/proc/\\([0-9]*\\)/.*|\\1|p' | sort -u)\n"
         "[ -z \"$pids\" ] || kill -s KILL $pids 2>/dev/null\n"
         "if command -v iptables >/dev/null; then\n"
         "  while iptables -w -D INPUT -j " + chain + " 2>/dev/null; do :; done\n"
         "  iptables -w -F " + chain + " 2>/dev/null; iptables -w -X " + chain + " 2>/dev/null\n"
         "fi\n"
         "rm -rf " + std::string(kRemoteBase) + "/$id\n"
         "! iptables -w -S " + chain + " >/dev/null 2>&1 && [ ! -e " + kRemoteBase + "/$id ]\n";
}

void remove_remote_run(const SshHostConnection& host, const std::string& run_id, const Deadline& deadline) {
  host.check("sh -s", "removing run " + run_id, remote_run_removal_script(run_id), deadline, Retry::kIdempotent);
}

void clean_ssh_hosts(const NodesFile& hosts, const std::string& run_id, CleanReport& report) {
  const fs::path control = RunState::state_dir() / ("ssh-clean-" + std::to_string(::getpid()));
  fs::create_directories(control);
  std::mutex mu;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < hosts.hosts.size(); ++i) {
    threads.emplace_back([&, i] {
      const SshHost& h = hosts.hosts[i];
      std::vector<std::string> removed, errors;
      // A host that stays silent is reported after a minute, never waited for longer.
      const Deadline deadline = Deadline::after(std::chrono::seconds(60));
      try {
        SshHostConnection conn(h, control / std::to_string(i));
        conn.open(nullptr, control / (std::to_string(i) + ".log"), deadline.within(std::chrono::seconds(15)));
        for (const std::string& id : remote_run_ids(conn, deadline)) {
          if (!run_id.empty() && id != run_id) continue;
          std::error_code ec;
          if (fs::exists(RunState::state_dir() / (id + ".json"), ec)) continue;  // alive, or not cleaned here yet
          remove_remote_run(conn, id, deadline);
          removed.push_back("removed run " + id + " from " + h.name + " (" + h.host + ")");
        }
      } catch (const std::exception& e) {
        errors.push_back(h.name + " (" + hosts.path.string() + " line " + std::to_string(h.line) + "): " + e.what());
      }
      std::lock_guard lock(mu);
      report.removed.insert(report.removed.end(), removed.begin(), removed.end());
      report.errors.insert(report.errors.end(), errors.begin(), errors.end());
    });
  }
  for (auto& t : threads) t.join();
  std::error_code ec;
  fs::remove_all(control, ec);
}

}  // namespace fencecheck
