#include "platform/remote_process.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "platform/errors.h"

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

int RemoteProcess::group(const Deadline& deadline) {
  std::lock_guard lock(mu_);
  if (group_ > 0) return group_;
  const std::string f = shell_quote(pid_file_);
  // The host's own wait for the pid file ends before the deadline (in 100 ms steps, ≤ 5 s).
  const std::int64_t steps = std::clamp<std::int64_t>(deadline.left().count() / 100 - 2, 0, 50);
  SshResult r = host_.exec("i=0; while [ ! -s " + f + " ] && [ $i -lt " + std::to_string(steps) +
                               " ]; do sleep 0.1; i=$((i+1)); done; cat " + f + " 2>/dev/null; true",
                           "", deadline, Retry::kIdempotent);
  try {
    group_ = std::stoi(r.out);
  } catch (const std::exception&) {
    group_ = 0;
  }
  return group_;
}

bool RemoteProcess::signal_group(const std::string& name, const Deadline& deadline, const std::string& extra) {
  int g = group(deadline);
  if (g <= 1) return false;
  // A signal sent twice is the same signal: safe to retry after a transport failure.
  SshResult r = host_.exec("kill -s " + name + " -- -" + std::to_string(g) + " 2>/dev/null || exit 3\n" + extra, "",
                           deadline, Retry::kIdempotent);
  return r.exit == 0;
}

void RemoteProcess::signal(int sig, const Deadline& deadline) {
  if (stopped_) return;
  const char* name = ::sigabbrev_np(sig);
  if (name != nullptr) signal_group(name, deadline);
}

bool RemoteProcess::pause(const Deadline& deadline) {
  if (stopped_) return false;
  paused_ = true;
  // Stopped only once every thread of every member of the group shows state T (or t, or is
  // a zombie Z / dead X, which cannot act either: is_halted_state's rule) on the host;
  // the host gives up a little before the deadline, so that its answer still comes. A child
  // that exited just as its stopped parent got SIGSTOP stays a zombie until the resume:
  // counted as running, it failed the pause (an ssh test's ticker, once in CI).
  const std::int64_t polls = std::max<std::int64_t>(1, (deadline.left().count() - 300) / 20);
  try {
    const std::string wait_stopped =
        "g=" + std::to_string(group(deadline)) + "; n=0\n"
        "while :; do\n"
        "  if ps -e -L -o pgid=,stat= | awk -v g=\"$g\" '$1==g && $2 !~ /^[TtZX]/ {r=1} END {exit r}'; then exit 0; fi\n"
        "  [ $n -ge " + std::to_string(polls) + " ] && exit 4; n=$((n+1)); sleep 0.02\n"
        "done\n";
    return signal_group("STOP", deadline, wait_stopped);
  } catch (const HarnessError&) {
    return false;  // no answer: not known to be stopped, so not reported as paused
  }
}

void RemoteProcess::resume(const Deadline& deadline) {
  if (!stopped_) signal_group("CONT", deadline);
  paused_ = false;
}

bool RemoteProcess::group_maps(const std::string& remote_path, const Deadline& deadline) {
  const int g = group(deadline);
  if (g <= 1) return false;
  SshResult r = host_.exec("for p in $(ps -e -o pid=,pgid= | awk -v g=" + std::to_string(g) +
                               " '$2==g {print $1}'); do\n"
                               "  grep -qF -- " + shell_quote(remote_path) + " /proc/$p/maps 2>/dev/null && exit 0\n"
                               "done\nexit 1\n",
                           "", deadline, Retry::kIdempotent);
  return r.exit == 0;
}

bool RemoteProcess::wait_local_exit(const Deadline& deadline) {
  while (local_.alive()) {
    if (deadline.expired()) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

void RemoteProcess::crash(const Deadline& deadline) {
  local_.expect_exit();
  try {
    signal_group("KILL", deadline);
  } catch (const HarnessError&) {
    // The host did not answer: the ssh client goes below; the run's removal there kills the rest.
  }
  paused_ = false;
  wait_local_exit(deadline);
  local_.crash(Deadline::after(milliseconds(0)));  // reaps the ssh client (and kills it if the host never answered)
}

// One remote command: SIGCONT and SIGTERM to the group, its leader given `grace` to end,
// then SIGKILL to what is left of the group (grandchildren included) — a single round trip,
// so that a teardown of many hosts costs about one each.
void RemoteProcess::stop(milliseconds grace) {
  if (stopped_.exchange(true)) return;
  local_.expect_exit();
  // A host that did not answer the last command gets a short try, not the whole grace.
  const Deadline graceful = Deadline::after(host_.silent() ? kSilentHostWait : grace + milliseconds(1000));
  try {
    const int g = group(graceful);
    if (g > 1) {
      const std::string group = "-" + std::to_string(g);
      host_.exec("kill -s CONT -- " + group + " 2>/dev/null; kill -s TERM -- " + group + " 2>/dev/null; n=0\n" +
                     "while kill -0 -- " + group + " 2>/dev/null && [ $n -lt " + std::to_string(grace.count() / 20) +
                     " ]; do sleep 0.02; n=$((n+1)); done\n"
                     "kill -s KILL -- " + group + " 2>/dev/null; true\n",
                 "", graceful, Retry::kIdempotent);
    }
  } catch (const std::exception&) {
    // The host does not answer: the ssh client goes below, and the run's removal on the
    // host (or `fencecheck clean --nodes-file`) kills what is left there.
  }
  paused_ = false;
  local_.stop(std::min(graceful.left(), milliseconds(500)));  // the ssh client passes on the last of the log
}

}  // namespace fencecheck
