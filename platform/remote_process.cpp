#include "platform/remote_process.h"

#include <sys/wait.h>

#include <cstring>
#include <thread>

namespace fencecheck {

using std::chrono::milliseconds;

RemoteProcess::RemoteProcess(ProcessSpec spec, Process& local, const SshHostConnection& host, std::string pid_file)
    : spec_(std::move(spec)), local_(local), host_(host), pid_file_(std::move(pid_file)) {}

std::string RemoteProcess::describe_exit() {
  auto status = local_.exit_status();
  // ssh ends with 255 when the remote side ended by a signal, or the connection went.
  if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 255) {
    return "ended on " + host_.host().name + " by a signal, or its ssh connection was lost (ssh exited with 255)";
  }
  return local_.describe_exit();
}

int RemoteProcess::group() {
  std::lock_guard lock(mu_);
  if (group_ > 0) return group_;
  const std::string f = shell_quote(pid_file_);
  SshResult r = host_.exec("i=0; while [ ! -s " + f + " ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; cat " + f +
                           " 2>/dev/null; true");
  try {
    group_ = std::stoi(r.out);
  } catch (const std::exception&) {
    group_ = 0;
  }
  return group_;
}

bool RemoteProcess::signal_group(const std::string& name, const std::string& extra, milliseconds waits) {
  int g = group();
  if (g <= 1) return false;
  SshResult r = host_.exec("kill -s " + name + " -- -" + std::to_string(g) + " 2>/dev/null || exit 3\n" + extra, "",
                           waits + milliseconds(10000));
  return r.exit == 0;
}

void RemoteProcess::signal(int sig) {
  if (stopped_) return;
  const char* name = ::sigabbrev_np(sig);
  if (name != nullptr) signal_group(name);
}

bool RemoteProcess::pause(milliseconds timeout) {
  if (stopped_) return false;
  paused_ = true;
  // Stopped only once every thread of every member of the group shows state T on the host.
  const std::string wait_stopped =
      "g=" + std::to_string(group()) + "; n=0\n"
      "while :; do\n"
      "  if ps -e -L -o pgid=,stat= | awk -v g=\"$g\" '$1==g && $2 !~ /^T/ {r=1} END {exit r}'; then exit 0; fi\n"
      "  [ $n -ge " + std::to_string(timeout.count() / 20 + 1) + " ] && exit 4; n=$((n+1)); sleep 0.02\n"
      "done\n";
  return signal_group("STOP", wait_stopped, timeout);
}

void RemoteProcess::resume() {
  if (!stopped_) signal_group("CONT");
  paused_ = false;
}

bool RemoteProcess::group_maps(const std::string& remote_path) {
  const int g = group();
  if (g <= 1) return false;
  SshResult r = host_.exec("for p in $(ps -e -o pid=,pgid= | awk -v g=" + std::to_string(g) +
                           " '$2==g {print $1}'); do\n"
                           "  grep -qF -- " + shell_quote(remote_path) + " /proc/$p/maps 2>/dev/null && exit 0\n"
                           "done\nexit 1\n");
  return r.exit == 0;
}

bool RemoteProcess::wait_local_exit(milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (local_.alive()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

void RemoteProcess::crash() {
  local_.expect_exit();
  signal_group("KILL");
  paused_ = false;
  wait_local_exit(milliseconds(1000));
  local_.crash();  // reaps the ssh client (and kills it if the host never answered)
}

void RemoteProcess::stop(milliseconds grace) {
  if (stopped_.exchange(true)) return;
  local_.expect_exit();
  try {
    if (local_.alive()) {
      signal_group("CONT");
      signal_group("TERM");
      wait_local_exit(grace);
    }
    signal_group("KILL");  // what is left of the group, grandchildren included
  } catch (const std::exception&) {
    // The host does not answer: the ssh client goes below, and the run's removal on the
    // host (or `fencecheck clean --nodes-file`) kills what is left there.
  }
  paused_ = false;
  local_.stop(milliseconds(1000));
}

}  // namespace fencecheck
