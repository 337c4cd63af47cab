#include "harness/suite/suite_rows.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

// "<host>-<pid>": who is making a partial row. The store may be shared between machines or
// pods (NFS, a ReadWriteMany volume) whose process ids overlap — a pod's run-row is often
// pid 1 — so a pid alone names no process.
std::string this_maker() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "unknown");
  return std::string(host) + "-" + std::to_string(::getpid());
}

// Leftovers of earlier tries of this row on this host whose process is gone: a run-row
// killed mid-way, or an earlier process with this one's pid (a container's pid 1). Another
// host's are left alone (no way to know that they are dead; collect never reads them).
void remove_dead_partials(const fs::path& rows, const std::string& id) {
  std::error_code ec;
  const std::string prefix = std::string(kPartial) + id + "-";
  const std::string me = this_maker(), my_host = me.substr(0, me.rfind('-'));
  for (const auto& e : fs::directory_iterator(rows, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string maker = name.substr(prefix.size());
    const std::size_t dash = maker.rfind('-');
    if (dash == std::string::npos || maker.substr(0, dash) != my_host) continue;
    int pid = 0;
    try {
      pid = std::stoi(maker.substr(dash + 1));
    } catch (const std::exception&) {
    }
    if (pid > 0 && pid != ::getpid() && os::process_is(pid, std::nullopt)) continue;  // another try, still running
    fs::remove_all(e.path(), ec);
  }
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
  remove_dead_partials(rows, row.id);
  const fs::path partial = rows / (std::string(kPartial) + row.id + "-" + this_maker());
  fs::create_directories(partial, ec);
  if (ec) throw HarnessError("cannot create " + partial.string() + ": " + ec.message());
  // The run itself goes where it stays (a replay of it names that place): runs/<id>/, its
  // own store, so that rows run at once never share a `latest`.
  out.run = run_suite_case(row.c, exe, store / "runs" / row.id, partial / "run.log", row.seed);
  // A bench that failed (no results.json) is stored too, for the table to show, but without
  // a verdict: the next run-row of this row runs it again.
  const bool verdict = !out.run.results.is_null();
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
