#include "harness/run/bench_health.h"

#include <algorithm>
#include <cstdio>

#include "platform/os_util.h"

namespace fencecheck {
namespace {

std::string seconds_text(Nanos t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(t) / 1e9);
  return buf;
}

nlohmann::json tally_json(const HistoryStats::Tally& t) {
  return {{"ok", t.ok}, {"fail", t.fail}, {"info", t.info}};
}

}  // namespace

BenchHealth::BenchHealth(const Runtime& runtime, const HistoryRecorder& history, HealthOptions options)
    : runtime_(runtime), history_(history), options_(options), stall_from_(history.now()) {}

void BenchHealth::add_locked(std::string problem) { problems_.push_back(std::move(problem)); }

std::string BenchHealth::describe_death(Process& p) const {
  const ProcessSpec& spec = p.spec();
  return spec.name + " on node " + spec.node + " (pid " + std::to_string(p.pid()) + ") " +
         p.describe_exit() + " at " + seconds_text(history_.now()) +
         " and no fault killed it; last lines of " + spec.log.string() + ":\n" + p.log_tail(10);
}

std::vector<std::string> BenchHealth::poll(bool fault_in_force) {
  std::vector<Process*> processes = runtime_.processes();
  std::lock_guard lock(mu_);
  std::vector<std::string> found = std::move(unpolled_);
  unpolled_.clear();
  const std::size_t before = problems_.size();
  for (Process* p : processes) {
    if (reported_.count(p) || p->exit_expected()) continue;
    if (!p->alive()) {
      reported_.insert(p);
      add_locked(describe_death(*p));
      died_.push_back({{"name", p->spec().name}, {"node", p->spec().node}, {"pid", p->pid()},
                       {"exit", p->describe_exit()}, {"at_ns", history_.now()}});
      continue;
    }
    // Two polls in a row, so that a resume racing this poll is never taken for a hang.
    bool stopped = !p->paused() && os::process_state(p->pid()) == 'T';
    int& seen = stopped_polls_[p];
    seen = stopped ? seen + 1 : 0;
    if (seen >= 2) {
      reported_.insert(p);
      add_locked(p->spec().name + " on node " + p->spec().node + " (pid " + std::to_string(p->pid()) +
                 ") is stopped (SIGSTOP) although no fault paused it");
    }
  }
  Nanos now = history_.now();
  if (fault_in_force) {
    stall_from_ = now;
  } else if (!stall_reported_) {
    Nanos last_ok = history_.stats().last_ok;
    Nanos since = std::max(stall_from_, last_ok);
    if (now - since > std::chrono::nanoseconds(options_.stall_limit).count()) {
      stall_reported_ = true;
      add_locked("no client op succeeded for " + seconds_text(now - since) + " (since " +
                 seconds_text(since) + ") while no fault was in force: a server or the resource "
                 "may be hung or unreachable" +
                 (last_unknown_.empty() ? "" : "; the last op of unknown outcome, " + last_unknown_));
    }
  }
  found.insert(found.end(), problems_.begin() + static_cast<std::ptrdiff_t>(before), problems_.end());
  return found;
}

void BenchHealth::op_unknown(const std::string& node, const std::string& error) {
  std::lock_guard lock(mu_);
  last_unknown_ = "on " + node + ": " + error;
}

void BenchHealth::client_stopped(const std::string& node, const std::string& reason) {
  std::lock_guard lock(mu_);
  add_locked("client " + node + " stopped: " + reason);
}

void BenchHealth::worker_died(const std::string& node, Process& worker, const std::string& last_error) {
  std::lock_guard lock(mu_);
  if (!reported_.insert(&worker).second) return;
  add_locked(describe_death(worker) + "\nclient " + node + " stopped; its last op ended: " + last_error);
  unpolled_.push_back(problems_.back());  // the next poll returns it, as if it had found the death itself
  died_.push_back({{"name", worker.spec().name}, {"node", worker.spec().node}, {"pid", worker.pid()},
                   {"exit", worker.describe_exit()}, {"at_ns", history_.now()}});
}

bool BenchHealth::sound() const {
  std::lock_guard lock(mu_);
  return problems_.empty();
}

std::vector<std::string> BenchHealth::problems() const {
  std::lock_guard lock(mu_);
  return problems_;
}

void BenchHealth::finish(Nanos end) {
  HistoryStats s = history_.stats();
  std::uint64_t done = s.total.ok + s.total.fail + s.total.info;
  std::lock_guard lock(mu_);
  end_ = end;
  if (s.total.ok == 0) {
    add_locked("no client op succeeded during the test (" + std::to_string(done) +
               " completed, none ok): nothing was tested");
  } else if (2 * (s.not_sent + s.total.info) > done) {
    warnings_.push_back(std::to_string(s.not_sent) + " of " + std::to_string(done) +
                        " client ops could not even be attempted (the service was unreachable) and " +
                        std::to_string(s.total.info) + " ended with an unknown outcome: most of the "
                        "test did not exercise the lock service");
  }
}

nlohmann::json BenchHealth::to_json() const {
  Nanos end = end_;
  HistoryStats s = history_.stats();
  nlohmann::json by_f = nlohmann::json::object();
  for (const auto& [f, t] : s.by_f) by_f[f] = tally_json(t);
  // The stretch after the last ok op counts too: a run whose ops stopped succeeding early
  // must show it.
  Nanos from = s.last_ok >= 0 ? s.last_ok : std::max<Nanos>(s.first_invoke, 0);
  Nanos gap = s.longest_ok_gap, gap_end = s.longest_ok_gap_end;
  if (end - from > gap) gap = end - from, gap_end = end;
  std::lock_guard lock(mu_);
  return {{"sound", problems_.empty()},
          {"problems", problems_},
          {"warnings", warnings_},
          {"processes_died", died_},
          {"ops", tally_json(s.total)},
          {"ops_not_sent", s.not_sent},
          {"ops_by_f", by_f},
          {"longest_without_ok_s", static_cast<double>(gap) / 1e9},
          {"longest_without_ok_ended_at_s", static_cast<double>(gap_end) / 1e9}};
}

}  // namespace fencecheck
