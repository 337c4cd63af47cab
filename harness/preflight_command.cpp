#include "harness/preflight_command.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "backends/registry.h"
#include "platform/errors.h"
#include "platform/nodes_file.h"
#include "platform/run_state.h"
#include "platform/ssh_remote.h"

namespace fencecheck {

namespace fs = std::filesystem;

namespace {

// More skew than this makes lease and clock results hard to read: the hosts' own clocks
// decide when leases expire.
constexpr double kMaxSkewMs = 500;

// One shell line per program: prints "missing <program> <package>" unless it is on the
// host's $PATH, in the sbin directories or in the package's own directories.
std::string program_checks() {
  std::string script;
  for (const BackendInfo& b : backend_registry()) {
    for (const auto& bin : b.binaries) {
      std::string dirs = "$(echo \"$PATH\" | tr : ' ') /usr/local/sbin /usr/sbin /sbin";
      for (const auto& d : bin.dirs) dirs += " " + d;
      script += "f=; for d in " + dirs + "; do [ -x \"$d/" + bin.program + "\" ] && f=1; done; [ -n \"$f\" ] || echo missing " +
                bin.program + " " + bin.debian_package + "\n";
    }
  }
  return script;
}

std::vector<std::string> check_host(const SshHost& h, const fs::path& control, std::size_t i) {
  std::vector<std::string> problems;
  SshHostConnection conn(h, control / std::to_string(i));
  const Deadline deadline = Deadline::after(std::chrono::seconds(30));  // a silent host is a finding, not a hang
  try {
    conn.open(nullptr, control / (std::to_string(i) + ".log"), deadline);
  } catch (const std::exception& e) {
    return {e.what()};
  }
  const std::string script = "[ \"$(id -u)\" = 0 ] || echo notroot\n"
                             "iptables -w -S >/dev/null 2>&1 || echo noiptables\n"
                             "command -v iptables-restore >/dev/null || echo noiptables\n" +
                             program_checks();
  SshResult r = conn.exec(script, "", deadline, Retry::kIdempotent);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line == "notroot") problems.push_back("logs in as " + h.user + ", not root: set \"user\": \"root\" (the runtime sets firewall rules and signals servers)");
    if (line == "noiptables") problems.push_back("iptables does not work there: install iptables (scripts/setup-node.sh)");
    if (line.rfind("missing ", 0) == 0) {
      std::istringstream words(line.substr(8));
      std::string program, package;
      words >> program >> package;
      problems.push_back(program + " is not installed: apt-get install " + package + " (or run scripts/setup-node.sh)");
    }
  }
  // Skew: the host's wall clock against the middle of the round trip's on the controller.
  const auto before = std::chrono::system_clock::now();
  SshResult date = conn.exec("date +%s%N", "", deadline, Retry::kIdempotent);
  const auto after = std::chrono::system_clock::now();
  try {
    const double remote_ms = std::stod(date.out) / 1e6;
    const double local_ms =
        std::chrono::duration<double, std::milli>((before + (after - before) / 2).time_since_epoch()).count();
    const double skew = remote_ms - local_ms;
    if (std::abs(skew) > kMaxSkewMs) {
      problems.push_back("its clock is " + std::to_string(static_cast<long long>(skew)) +
                         " ms off the controller's (more than 500 ms): synchronise it (chrony, systemd-timesyncd)");
    }
  } catch (const std::exception&) {
    problems.push_back("`date +%s%N` did not print a time: " + date.out);
  }
  conn.close(Deadline::after(std::chrono::seconds(5)));
  return problems;
}

}  // namespace

int run_preflight(const std::string& nodes_file, std::ostream& out, std::ostream& err) {
  NodesFile hosts;
  try {
    hosts = read_nodes_file(nodes_file);
  } catch (const InputError& e) {
    err << "fencecheck preflight: " << e.what() << "\n";
    return kExitHarnessOrInput;
  }
  const fs::path control = RunState::state_dir() / ("ssh-preflight-" + std::to_string(::getpid()));
  fs::create_directories(control);
  std::vector<std::vector<std::string>> problems(hosts.hosts.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < hosts.hosts.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        problems[i] = check_host(hosts.hosts[i], control, i);
      } catch (const std::exception& e) {
        problems[i] = {e.what()};
      }
    });
  }
  for (auto& t : threads) t.join();
  std::error_code ec;
  fs::remove_all(control, ec);
  bool all_ok = true;
  for (std::size_t i = 0; i < hosts.hosts.size(); ++i) {
    const SshHost& h = hosts.hosts[i];
    const std::string who = h.name + " (" + h.role + ", " + h.user + "@" + h.host + ":" + std::to_string(h.port) + ")";
    if (problems[i].empty()) out << who << ": ok\n";
    for (const auto& p : problems[i]) out << who << ": " << p << "\n";
    all_ok = all_ok && problems[i].empty();
  }
  out << (all_ok ? "preflight: every host is ready\n" : "preflight: some hosts are not ready (see above)\n");
  return all_ok ? 0 : 1;
}

void add_preflight_command(CLI::App& app) {
  auto nodes_file = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("preflight", "Check the hosts of a nodes file before --runtime ssh uses them");
  cmd->add_option("--nodes-file", *nodes_file, "The hosts, one JSON object per line (docs/runtimes.md)")->required();
  cmd->callback([nodes_file] {
    int code = run_preflight(*nodes_file, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace fencecheck
