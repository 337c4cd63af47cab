#include "harness/budget/datasheet_jobs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "platform/errors.h"
#include "platform/stop_signals.h"

namespace fencecheck {
namespace {

pid_t start(const SheetJob& job) {
  std::vector<std::string> argv_s = {"/proc/self/exe"};
  argv_s.insert(argv_s.end(), job.args.begin(), job.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = job.log.string();
  const pid_t parent = ::getpid();
  // Stops are blocked across the fork: the child sets its handlers back to the default and
  // leaves the terminal's process group (a terminal's Ctrl-C then reaches the parent only,
  // which passes it on once) before it takes any.
  sigset_t stops, before;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stops, &before);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGINT);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the line above
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGINT, &dfl, nullptr);
    ::sigaction(SIGTERM, &dfl, nullptr);
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::sigprocmask(SIG_SETMASK, &before, nullptr);
  return pid;  // -1 when it could not fork
}

}  // namespace

std::vector<int> run_sheet_jobs(const std::vector<SheetJob>& jobs, int parallel) {
  const ScopedStopCount stops;
  std::vector<int> codes(jobs.size(), -2);
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  bool passed_on = false;
  bool fork_failed = false;
  while (next < jobs.size() || !running.empty()) {
    while (stops.count() == 0 && !fork_failed && next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      const pid_t pid = start(jobs[next]);
      if (pid < 0) {
        fork_failed = true;  // stop the others as Ctrl-C would, wait for them, then say so
        break;
      }
      std::cout << "fencecheck datasheet: started " << jobs[next].name << " (" << jobs[next].log.string() << ")"
                << std::endl;
      running[pid] = next;
      ++next;
    }
    if ((stops.count() > 0 || fork_failed) && !passed_on) {  // once: each child ends its run and keeps its sheet
      for (const auto& [pid, k] : running) ::kill(pid, SIGINT);
      passed_on = true;
      next = jobs.size();
    }
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0 && running.count(done) > 0) {
      const std::size_t k = running[done];
      running.erase(done);
      codes[k] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      std::cout << "fencecheck datasheet: " << jobs[k].name << " done (exit " << codes[k] << ")" << std::endl;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (fork_failed) throw HarnessError("cannot fork a datasheet's process (the ones started have ended)");
  return codes;
}

}  // namespace fencecheck
