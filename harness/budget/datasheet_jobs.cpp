#include "harness/budget/datasheet_jobs.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "harness/suite/suite_runner.h"
#include "platform/errors.h"
#include "platform/stop_signals.h"

namespace fencecheck {
namespace {

// The job's child: this binary again (/proc/self/exe), dying with its parent by SIGINT,
// which makes it end its run as Ctrl-C would and keep its sheet.
pid_t start(const SheetJob& job) {
  std::vector<std::string> argv = {"/proc/self/exe"};
  argv.insert(argv.end(), job.args.begin(), job.args.end());
  return start_child_group(argv, job.log, SIGINT);
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
