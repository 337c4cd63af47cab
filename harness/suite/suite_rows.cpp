#include "harness/suite/suite_rows.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <functional>
#include <optional>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "platform/atomic_file.h"
#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kPartial = ".partial-";

std::string first_line_of(const char* file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// The fields of a maker, from the right: pid, pid namespace, boot; the host is the rest
// (a host name may hold '-'). nullopt for another form (an older run-row's "<pid>").
std::optional<std::array<std::string, 4>> split_maker(const std::string& maker) {
  std::array<std::string, 4> parts;  // host, boot, pidns, pid
  std::string rest = maker;
  for (int k = 3; k >= 1; --k) {
    const std::size_t dash = rest.rfind('-');
    if (dash == std::string::npos || dash == 0) return std::nullopt;
    parts[k] = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
  }
  parts[0] = rest;
  return parts;
}

}  // namespace

std::string row_maker() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "unknown");
  std::string boot = first_line_of("/proc/sys/kernel/random/boot_id").substr(0, 8);
  std::error_code ec;
  std::string pidns = fs::read_symlink("/proc/self/ns/pid", ec).string();  // "pid:[4026531836]"
  std::string digits;
  for (char c : pidns) digits += std::isdigit(static_cast<unsigned char>(c)) ? std::string(1, c) : "";
  return std::string(host) + "-" + (boot.empty() ? "0" : boot) + "-" + (digits.empty() ? "0" : digits) + "-" +
         std::to_string(::getpid());
}

bool is_dead_partial(const std::string& maker, const std::string& me, const std::function<bool(int)>& alive) {
  auto theirs = split_maker(maker), mine = split_maker(me);
  if (!theirs || !mine || (*theirs)[1] != (*mine)[1] || (*theirs)[2] != (*mine)[2]) return false;  // not ours to judge
  int pid = 0;
  try {
    pid = std::stoi((*theirs)[3]);
  } catch (const std::exception&) {
    return false;
  }
  // This process has made no partial of the row yet: one with its pid is an earlier
  // process's (pids are reused).
  return pid == std::stoi((*mine)[3]) || !alive(pid);
}

namespace {

// Leftovers of earlier tries of this row whose process is gone: a run-row killed mid-way.
void remove_dead_partials(const fs::path& rows, const std::string& id, const std::string& me) {
  std::error_code ec;
  const std::string prefix = std::string(kPartial) + id + "-";
  for (const auto& e : fs::directory_iterator(rows, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    if (is_dead_partial(name.substr(prefix.size()), me, [](int pid) { return os::process_is(pid, std::nullopt); })) {
      fs::remove_all(e.path(), ec);
    }
  }
}

// Whether a run's results.json says the test was interrupted ("run": {"interrupted": true}).
bool was_interrupted(const json& results) {
  auto run = results.find("run");
  if (run == results.end() || !run->is_object()) return false;
  auto flag = run->find("interrupted");
  return flag != run->end() && flag->is_boolean() && flag->get<bool>();
}

std::string describe(const PlanRow& row) {
  return "row " + std::to_string(row.index) + " (" + row.c.id + ", repeat " + std::to_string(row.repeat) + ", id " +
         row.id + ")";
}

// Whether the row stored in dir holds a verdict (its bench did not fail).
bool stored_a_verdict(const fs::path& dir) {
  std::ifstream in(dir / "row.json");
  json doc = json::parse(in, nullptr, false);
  return doc.is_object() && doc.value("verdict", false);
}

struct StoredRow {
  PlanRow row;
  SuiteRun run;
};

StoredRow read_stored_row(const fs::path& dir, const fs::path& store) {
  const fs::path file = dir / "row.json";
  std::ifstream in(file);
  json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("plan_row") || !doc["plan_row"].is_object()) {
    throw std::invalid_argument(file.string() + ": not a row (no \"plan_row\" object)");
  }
  StoredRow s;
  s.row = parse_plan_line(doc["plan_row"].dump(), file.string() + ": field \"plan_row\"");
  if (dir.filename() != s.row.id) {
    throw std::invalid_argument(file.string() + ": field \"plan_row\" is row " + s.row.id + ", not " +
                                dir.filename().string());
  }
  s.run.seed = s.row.seed;
  s.run.exit_code = doc.value("exit_code", -1);
  s.run.seconds = doc.value("seconds", 0.0);
  const std::string run = doc.value("run", std::string());
  if (!run.empty()) s.run.run_dir = store / run;
  judge_suite_run(s.row.c, s.run, dir / "run.log");
  return s;
}

}  // namespace

RowOutcome run_row(const PlanRow& row, const fs::path& store, const fs::path& exe) {
  const fs::path rows = store / "rows", final_dir = rows / row.id;
  RowOutcome out;
  std::error_code ec;
  if (fs::exists(final_dir / "row.json")) {
    if (stored_a_verdict(final_dir)) {
      out.skipped = out.stored = true;
      return out;
    }
    fs::remove_all(final_dir, ec);  // an earlier try whose bench failed: this one replaces it
  }
  fs::create_directories(rows, ec);
  if (ec) throw HarnessError("cannot create " + rows.string() + ": " + ec.message());
  const std::string me = row_maker();  // reads /proc and the host name: once per row
  remove_dead_partials(rows, row.id, me);
  const fs::path partial = rows / (std::string(kPartial) + row.id + "-" + me);
  fs::create_directories(partial, ec);
  if (ec) throw HarnessError("cannot create " + partial.string() + ": " + ec.message());
  // The run itself goes where it stays (a replay of it names that place): runs/<id>/, its
  // own store, so that rows run at once never share a `latest`.
  out.run = run_suite_case(row.c, exe, store / "runs" / row.id, partial / "run.log", row.seed);
  // A bench that failed (no results.json) is stored too, for the table to show, but without
  // a verdict: the next run-row of this row runs it again. So is a run cut short by a signal
  // (Ctrl-C, a pod's SIGTERM on eviction or drain): its results are of a shorter test.
  const bool verdict = !out.run.results.is_null() && !was_interrupted(out.run.results);
  json doc = {{"plan_row", json::parse(plan_line(row))},
              {"verdict", verdict},
              {"exit_code", out.run.exit_code},
              {"seconds", out.run.seconds},
              {"run", out.run.run_dir.empty() ? "" : fs::relative(out.run.run_dir, store).string()}};
  write_file_atomically(partial / "row.json", doc.dump(2) + "\n");
  fs::rename(partial, final_dir, ec);
  if (ec) {
    // Another process completed the same row first: its row stands, this one goes.
    if (!fs::exists(final_dir / "row.json")) throw HarnessError("cannot store " + final_dir.string() + ": " + ec.message());
    fs::remove_all(partial, ec);
    out.skipped = true;
    out.stored = true;
    return out;
  }
  // The error names the log where it now is, not the partial directory it was written in.
  if (!verdict) judge_suite_run(row.c, out.run, final_dir / "run.log");
  out.stored = verdict;
  return out;
}

CollectResult collect_rows(const fs::path& store, const std::optional<std::vector<PlanRow>>& plan) {
  if (!fs::is_directory(store)) throw std::invalid_argument(store.string() + ": no such store directory");
  CollectResult c;
  std::vector<StoredRow> stored;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(store / "rows", ec)) {
    if (!e.is_directory() || e.path().filename().string().rfind(kPartial, 0) == 0) continue;
    if (!fs::exists(e.path() / "row.json")) continue;  // not a row (a row dir is renamed into place complete)
    stored.push_back(read_stored_row(e.path(), store));
  }
  // With a plan, an empty store is every row missing (an interrupted suite's, say), which
  // the problems name; without one there is nothing to collect or to name.
  if (stored.empty() && (!plan || plan->empty())) throw std::invalid_argument(store.string() + ": no rows in " + (store / "rows").string());
  std::sort(stored.begin(), stored.end(), [](const StoredRow& a, const StoredRow& b) {
    return a.row.index != b.row.index ? a.row.index < b.row.index : a.row.id < b.row.id;
  });
  // One row per case and repeat; the plan's when there is one.
  std::map<std::pair<std::string, int>, const StoredRow*> by_case;
  std::set<std::string> in_plan;
  if (plan) {
    for (const PlanRow& p : *plan) in_plan.insert(p.id);
  }
  c.suite = plan && !plan->empty() ? plan->front().suite : stored.front().row.suite;
  for (const StoredRow& s : stored) {
    if ((plan && !in_plan.count(s.row.id)) || s.row.suite != c.suite) {
      c.problems.push_back("foreign: rows/" + s.row.id + " is " + describe(s.row) + " of suite " + s.row.suite +
                           (plan ? ", not in the plan" : ", not " + c.suite));
      continue;
    }
    auto [it, fresh] = by_case.emplace(std::pair(s.row.c.id, s.row.repeat), &s);
    if (!fresh) {
      c.problems.push_back("duplicated: " + s.row.c.id + " repeat " + std::to_string(s.row.repeat) + " is stored as rows/" +
                           it->second->row.id + " and rows/" + s.row.id);
    }
  }
  std::vector<const StoredRow*> order;
  if (plan) {
    for (const PlanRow& p : *plan) {
      auto it = by_case.find({p.c.id, p.repeat});
      if (it == by_case.end() || it->second->row.id != p.id) {
        c.problems.push_back("missing: " + describe(p));
        continue;
      }
      order.push_back(it->second);
    }
  } else {
    for (const StoredRow& s : stored) {
      auto it = by_case.find({s.row.c.id, s.row.repeat});
      if (it != by_case.end() && it->second == &s) order.push_back(&s);
    }
  }
  for (const StoredRow* s : order) {
    if (c.result.rows.empty() || c.result.rows.back().c.id != s->row.c.id) c.result.rows.push_back({s->row.c, {}});
    c.result.rows.back().runs.push_back(s->run);
  }
  return c;
}

}  // namespace fencecheck
