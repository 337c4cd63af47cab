#include "harness/suite/suite_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "harness/run/run_command.h"
#include "platform/errors.h"
#include "platform/json_text.h"
#include "platform/stop_signals.h"
#include "report/stuck_locks.h"
#include "report/timeline.h"

namespace fencecheck {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_stops{0};
std::atomic<pid_t> g_child{0};

void on_stop(int sig) {
  ++g_stops;
  pid_t child = g_child.load();
  if (child > 0) ::kill(child, sig == SIGTERM ? SIGTERM : SIGINT);
}

// on_stop for SIGINT and SIGTERM for the suite's lifetime.
class StopGuard {
 public:
  StopGuard() { g_stops = 0; }

 private:
  ScopedStopHandler handler_{on_stop};
};

}  // namespace

// The run leads its own process group, so that a terminal's Ctrl-C reaches only the suite,
// which passes it on once. The run dies with the suite (PR_SET_PDEATHSIG), as the run's
// own servers and workers die with the run: a killed suite leaves nothing going, and
// `fencecheck clean` removes what the run had recorded. SIGKILL rather than SIGTERM:
// nobody is left to read what a run would go on to judge, and a run stuck in a wait must
// not outlive its suite. The signal comes when the thread that forked exits, so call this
// from the suite's main thread.
pid_t start_child_group(const std::vector<std::string>& args, const fs::path& log, int death_signal,
                        const std::function<void(pid_t)>& on_started) {
  std::vector<std::string> argv_s = args;
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  // Every signal blocked across the fork: the child must never run the parent's handlers (a
  // Ctrl-C before its exec), and one that reaches the parent before on_started has recorded
  // the child waits until it has, and is passed on.
  sigset_t all, parent_mask;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &parent_mask);
  pid_t pid = ::fork();
  if (pid == 0) {
    // Caught signals back to their default, as exec would do (the ignored stay ignored,
    // e.g. a nohup'd suite's SIGHUP); the parent's mask is restored just before exec, so a
    // signal that came meanwhile takes its default action here.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction now {};
      if (::sigaction(sig, nullptr, &now) == 0 && now.sa_handler != SIG_DFL && now.sa_handler != SIG_IGN) {
        ::sigaction(sig, &dfl, nullptr);
      }
    }
    // If the parent died before prctl took effect, nobody would ever signal us.
    if (::prctl(PR_SET_PDEATHSIG, death_signal) != 0 || ::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::sigprocmask(SIG_SETMASK, &parent_mask, nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const int fork_errno = errno;
  if (pid > 0 && on_started) on_started(pid);
  ::pthread_sigmask(SIG_SETMASK, &parent_mask, nullptr);  // a stop that came meanwhile is passed on now
  errno = fork_errno;
  return pid;
}

// The run leads its own process group, so that a terminal's Ctrl-C reaches only the suite,
// which passes it on once. The run dies with the suite (PR_SET_PDEATHSIG), as the run's
// own servers and workers die with the run: a killed suite leaves nothing going, and
// `fencecheck clean` removes what the run had recorded. SIGKILL rather than SIGTERM:
// nobody is left to read what a run would go on to judge, and a run stuck in a wait must
// not outlive its suite. The signal comes when the thread that forked exits, so call this
// from the suite's main thread.
int run_suite_child(const fs::path& exe, const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> argv = {exe.string(), "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = start_child_group(argv, log, SIGKILL, [](pid_t child) { g_child = child; });
  if (pid < 0) throw HarnessError("cannot fork a run: " + std::string(std::strerror(errno)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

namespace {

std::optional<double> earliest_violation(const nlohmann::json& results) {
  std::optional<double> first;
  const nlohmann::json checkers = results.value("checkers", nlohmann::json::object());
  for (const auto& [name, c] : checkers.items()) {
    if (!c.is_object() || !c.contains("first_violation_s") || !c["first_violation_s"].is_number()) continue;
    double t = c["first_violation_s"].get<double>();
    if (!first || t < *first) first = t;
  }
  return first;
}

SuiteRun run_once(const SuiteCase& c, const SuiteOptions& o, std::uint64_t seed, int r) {
  return run_suite_case(c, o.exe, o.dir / "runs", o.dir / "logs" / (c.id + "-" + std::to_string(r + 1) + ".log"),
                        seed);
}

}  // namespace

SuiteRun run_suite_case(const SuiteCase& c, const fs::path& exe, const fs::path& store, const fs::path& log,
                        std::uint64_t seed) {
  SuiteRun run;
  run.seed = seed;
  std::vector<std::string> args = c.args;
  args.insert(args.end(), {"--seed", std::to_string(seed), "--store", store.string(), "--name", c.id});
  auto t0 = std::chrono::steady_clock::now();
  std::error_code ec;
  fs::remove(store / "latest", ec);  // so that `latest` afterwards is this run's, or absent
  run.exit_code = run_suite_child(exe, args, log);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fs::path latest = store / "latest";
  if (fs::is_symlink(latest, ec)) run.run_dir = fs::canonical(latest, ec);
  judge_suite_run(c, run, log);
  return run;
}

void judge_suite_run(const SuiteCase& c, SuiteRun& run, const fs::path& log) {
  std::ifstream in(run.run_dir / "results.json");
  if (!run.run_dir.empty() && in) {
    run.results = nlohmann::json::parse(in, nullptr, false);
    if (run.results.is_discarded() || !run.results.is_object()) run.results = nullptr;
  }
  if (run.results.is_null()) {
    run.error = "exit " + std::to_string(run.exit_code) + ", no results.json; log " + log.string() + ": " +
                run_log_tail(log);
    return;
  }
  run.first_violation_s = earliest_violation(run.results);
  try {
    std::vector<report::StuckLock> stuck = report::stuck_locks(report::read_timeline(run.run_dir));
    if (!stuck.empty()) {
      run.out_of_reach_s = static_cast<double>(stuck.front().to - stuck.front().from) / 1e9;
      run.out_of_reach_refused = stuck.front().refused;
    }
  } catch (const std::exception&) {
    // a history the checkers could read but not the timeline: the checkers' verdict stands
  }
  if (c.scenario != nullptr) run.verdict = judge_scenario(*c.scenario, run.results);
}

bool for_each_until_stopped(std::size_t n, const std::function<void(std::size_t)>& step) {
  StopGuard guard;
  for (std::size_t i = 0; i < n && g_stops == 0; ++i) step(i);
  return g_stops > 0;
}

std::string run_log_tail(const fs::path& log, std::size_t max_bytes) {
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() <= max_bytes) return valid_utf8(text);
  std::size_t from = text.size() - max_bytes;
  // Start on a character, not inside one.
  while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
  return "…" + valid_utf8(std::string_view(text).substr(from));
}

std::string SuiteRun::verdict_text() const {
  if (results.is_null()) return "harness error";
  const nlohmann::json v = results.value("valid", nlohmann::json());
  if (v.is_boolean()) return v.get<bool>() ? "valid" : "invalid";
  return v.is_string() ? v.get<std::string>() : "unreadable";
}

std::size_t SuiteRow::detected() const {
  return static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [](const SuiteRun& r) { return r.verdict.detected; }));
}
std::size_t SuiteRow::false_alarms() const {
  return static_cast<std::size_t>(
      std::count_if(runs.begin(), runs.end(), [](const SuiteRun& r) { return r.verdict.false_alarm; }));
}
std::size_t SuiteRow::as_expected() const {
  return static_cast<std::size_t>(
      std::count_if(runs.begin(), runs.end(), [](const SuiteRun& r) { return r.verdict.as_expected; }));
}

const SuiteRun* SuiteRow::longest_out_of_reach() const {
  const SuiteRun* longest = nullptr;
  for (const SuiteRun& r : runs) {
    if (r.out_of_reach_s && (longest == nullptr || *r.out_of_reach_s > *longest->out_of_reach_s)) longest = &r;
  }
  return longest;
}

std::optional<double> SuiteRow::median_first_violation_s() const {
  std::vector<double> t;
  for (const auto& r : runs) {
    if (r.first_violation_s) t.push_back(*r.first_violation_s);
  }
  if (t.empty()) return std::nullopt;
  std::sort(t.begin(), t.end());
  return t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
}

SuiteResult run_suite(const std::vector<SuiteCase>& cases, const SuiteOptions& o) {
  std::error_code ec;
  fs::create_directories(o.dir / "logs", ec);
  if (ec) throw HarnessError("cannot create the suite directory " + o.dir.string() + ": " + ec.message());
  StopGuard guard;
  SuiteResult result;
  for (std::size_t k = 0; k < cases.size() && g_stops == 0; ++k) {
    result.rows.push_back({cases[k], {}});
    SuiteRow& row = result.rows.back();
    for (int r = 0; r < o.repeat && g_stops == 0; ++r) {
      row.runs.push_back(run_once(cases[k], o, o.seed + 1000 * k + static_cast<std::uint64_t>(r), r));
      if (o.on_run) o.on_run(row, row.runs.back());
    }
  }
  result.interrupted = g_stops > 0;
  return result;
}

std::vector<SuiteCase> scenario_cases(const std::vector<Scenario>& table, const std::vector<std::string>& only) {
  std::vector<SuiteCase> cases;
  for (const std::string& id : only) {
    if (std::none_of(table.begin(), table.end(), [&](const Scenario& s) { return s.id == id; })) {
      throw std::invalid_argument("unknown scenario \"" + id + "\"; scenarios: " + scenario_ids(table));
    }
  }
  for (const Scenario& s : table) {
    if (!only.empty() && std::find(only.begin(), only.end(), s.id) == only.end()) continue;
    // The scenario's run as `fencecheck run` reads it, defaults in (scenario_problem() checks it).
    const RunConfig run = parse_run_args(s.args);
    const std::string faults = run.plan.empty() ? join(run.nemesis, ",") : "plan " + run.plan;
    cases.push_back({s.id, s.title, s.claim, s.args, &s, run.backend, faults});
  }
  return cases;
}

}  // namespace fencecheck
