#include "harness/suite/suite_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "harness/suite/scenarios.h"
#include "harness/suite/suite_summary.h"
#include "platform/atomic_file.h"
#include "platform/json_text.h"
#include "report/html.h"
#include "report/junit.h"

namespace fencecheck {

namespace fs = std::filesystem;

namespace {

using report::html_escape;

std::string seconds_text(std::optional<double> s) {
  if (!s) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", *s);
  return buf;
}

std::string fraction(std::size_t n, std::size_t of) { return std::to_string(n) + "/" + std::to_string(of); }

std::string expected_text(const SuiteCase& c) {
  if (c.scenario == nullptr) return "—";
  std::string out;
  for (const auto& [checker, e] : c.scenario->expect) {
    if (e == Expect::kAny) continue;
    out += (out.empty() ? "" : ", ") + checker + " " + std::string(to_string(e));
  }
  return out;
}


// "exclusion invalid 3/3, resource valid 2/3 · 1 harness error": per checker, its most
// common verdict over the runs.
std::string observed_text(const SuiteRow& row) {
  std::vector<std::string> checkers;
  if (row.c.scenario != nullptr) {
    for (const auto& [name, e] : row.c.scenario->expect) checkers.push_back(name);
  } else {
    for (const auto& r : row.runs) {
      if (!r.results.is_object()) continue;
      const nlohmann::json all = r.results.value("checkers", nlohmann::json::object());
      for (const auto& [name, c] : all.items()) {
        if (std::find(checkers.begin(), checkers.end(), name) == checkers.end()) checkers.push_back(name);
      }
    }
  }
  std::size_t judged = 0, broken = 0;
  for (const auto& r : row.runs) (r.results.is_null() ? broken : judged)++;
  std::string out;
  for (const auto& name : checkers) {
    std::map<std::string, std::size_t> counts;
    for (const auto& r : row.runs) {
      if (!r.results.is_null()) ++counts[checker_verdict_text(r.results, name)];
    }
    for (const auto& [verdict, n] : counts) {
      out += (out.empty() ? "" : ", ") + name + " " + verdict + " " + fraction(n, judged);
    }
  }
  if (broken > 0) out += (out.empty() ? "" : " · ") + std::to_string(broken) + " harness error(s)";
  return out.empty() ? "—" : out;
}

std::string detection_text(const SuiteRow& row) {
  if (row.c.scenario == nullptr || row.c.scenario->safe()) return "—";
  return fraction(row.detected(), row.runs.size());
}

std::string false_alarm_text(const SuiteRow& row) {
  if (row.c.scenario == nullptr || !row.c.scenario->safe()) return "—";
  return fraction(row.false_alarms(), row.runs.size());
}

std::string link_target(const SuiteRun& r, const fs::path& dir) {
  if (r.run_dir.empty()) return "";
  fs::path target = fs::exists(r.run_dir / "report.html") ? r.run_dir / "report.html" : r.run_dir;
  return fs::relative(target, dir).string();
}

std::string md_cell(std::string s) {
  for (std::size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

struct Cells {
  std::vector<std::string> text;  // one per column
};
const std::vector<std::string> kColumns = {"scenario", "what", "backend", "faults", "expected", "observed",
                                           "detected", "false alarms", "median time to first violation",
                                           "blame", "told", "longest out of reach"};

// "overstayed 12, promise-broken 1 (predicted overstayed)": the exclusion violations of
// every run by class (docs/checkers.md, Blame); "—" when no run had one.
std::string blame_text(const SuiteRow& row) {
  std::map<std::string, std::uint64_t> sum;
  for (const auto& r : row.runs) {
    for (const auto& [name, n] : blame_counts(r.results)) sum[name] += n;
  }
  std::string out;
  for (const auto& [name, n] : sum) out += (out.empty() ? "" : ", ") + name + " " + std::to_string(n);
  if (out.empty()) out = "—";
  const bool predicted = row.c.scenario != nullptr && !row.c.scenario->blame.empty();
  return predicted ? out + " (predicted " + blame_names_of(row.c.scenario->blame) + ")" : out;
}

// "told 3/12, median 0.41 s late; 31 lost notices": whether the holders of the overlapped
// holds were told (a lost notice during the overlap) and how late, over every run; the
// median is that of the runs' medians. "—" when no run had a violation.
std::string told_text(const SuiteRow& row) {
  std::uint64_t told = 0, silent = 0, notices = 0;
  std::vector<double> medians;
  for (const auto& r : row.runs) {
    if (!r.results.is_object()) continue;
    const nlohmann::json e = r.results.value("checkers", nlohmann::json::object()).value("exclusion", nlohmann::json());
    const nlohmann::json n = e.is_object() ? e.value("notice", nlohmann::json()) : nlohmann::json();
    if (!n.is_object()) continue;
    told += n.value("told", std::uint64_t{0});
    silent += n.value("silent", std::uint64_t{0});
    notices += e.value("lost_notices", std::uint64_t{0});
    if (n.contains("median_latency_ns")) medians.push_back(n.value("median_latency_ns", 0.0) / 1e9);
  }
  if (told + silent == 0) return "—";
  std::string out = "told " + fraction(told, told + silent);
  if (!medians.empty()) {
    std::sort(medians.begin(), medians.end());
    out += ", median " + seconds_text(medians[(medians.size() - 1) / 2]) + " late";
  }
  return out + "; " + std::to_string(notices) + " lost notices";
}

// "15.7 s, 1074 refused (3/10 runs)": the longest stretch of any run in which a lock nobody
// held refused every acquire (report/stuck_locks.h), and how many runs had one; "—" if none.
std::string out_of_reach_text(const SuiteRow& row) {
  const SuiteRun* longest = row.longest_out_of_reach();
  if (longest == nullptr) return "—";
  const auto runs = std::count_if(row.runs.begin(), row.runs.end(),
                                  [](const SuiteRun& r) { return r.out_of_reach_s.has_value(); });
  return seconds_text(longest->out_of_reach_s) + ", " + std::to_string(longest->out_of_reach_refused) + " refused (" +
         fraction(static_cast<std::size_t>(runs), row.runs.size()) + " runs)";
}

Cells cells_of(const SuiteRow& row) {
  return {{row.c.id, row.c.title, row.c.backend, row.c.faults, expected_text(row.c), observed_text(row),
           detection_text(row), false_alarm_text(row), seconds_text(row.median_first_violation_s()),
           blame_text(row), told_text(row), out_of_reach_text(row)}};
}

std::string title_of(const std::string& kind) {
  for (const ScenarioTable& table : scenario_tables()) {
    if (table.name == kind) return "fencecheck suite " + table.name + ": " + table.title;
  }
  return "fencecheck suite matrix: backends × faults";
}

std::string html_page(const SuiteResult& suite, const std::string& kind, const fs::path& dir) {
  std::string h = "<!doctype html><html><head><meta charset=\"utf-8\"><title>" + html_escape(title_of(kind)) +
                  "</title><style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
                  "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}th{background:#eee}"
                  ".bad{background:#fdd}.good{background:#dfd}.runs a{margin-right:.5em}</style></head><body><h1>" +
                  html_escape(title_of(kind)) + "</h1>";
  if (suite.interrupted) h += "<p><b>Interrupted</b>: the table holds the runs made before Ctrl-C.</p>";
  h += "<table><tr>";
  for (const auto& c : kColumns) h += "<th>" + html_escape(c) + "</th>";
  h += "<th>runs</th></tr>";
  for (const auto& row : suite.rows) {
    const bool good = row.c.scenario != nullptr && row.as_expected() == row.runs.size();
    h += std::string("<tr class=\"") + (row.c.scenario == nullptr ? "" : good ? "good" : "bad") + "\">";
    for (const auto& t : cells_of(row).text) h += "<td>" + html_escape(t) + "</td>";
    h += "<td class=\"runs\">";
    for (std::size_t i = 0; i < row.runs.size(); ++i) {
      const SuiteRun& r = row.runs[i];
      std::string label = "#" + std::to_string(i + 1) + " " + r.verdict_text();
      std::string target = link_target(r, dir);
      h += target.empty() ? html_escape(label) + " "
                          : "<a href=\"" + html_escape(target) + "\" title=\"seed " + std::to_string(r.seed) + "\">" +
                                html_escape(label) + "</a>";
    }
    h += "</td></tr>";
  }
  h += "</table>";
  const std::vector<std::string> problems = suite_problems(suite);
  if (!problems.empty()) {
    h += "<h2>Not as predicted</h2><ul>";
    for (const auto& p : problems) h += "<li>" + html_escape(p) + "</li>";
    h += "</ul>";
  }
  h += "<p>" + html_escape(suite_summary(suite)) + "</p><h2>The claims</h2><dl>";
  for (const auto& row : suite.rows) {
    if (row.c.claim.empty()) continue;
    h += "<dt><b>" + html_escape(row.c.id) + "</b> " + html_escape(row.c.title) + "</dt><dd>" +
         html_escape(row.c.claim) + "</dd>";
  }
  return h + "</dl></body></html>\n";
}

}  // namespace

std::string suite_markdown(const SuiteResult& suite, const std::string& kind, const fs::path& dir) {
  std::string md = "# " + title_of(kind) + "\n\n";
  if (suite.interrupted) md += "**Interrupted**: the table holds the runs made before Ctrl-C.\n\n";
  md += "|";
  for (const auto& c : kColumns) md += " " + c + " |";
  md += " runs |\n|";
  for (std::size_t i = 0; i <= kColumns.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& row : suite.rows) {
    md += "|";
    for (const auto& t : cells_of(row).text) md += " " + md_cell(t) + " |";
    std::string runs;
    for (std::size_t i = 0; i < row.runs.size(); ++i) {
      const SuiteRun& r = row.runs[i];
      std::string target = link_target(r, dir);
      std::string label = std::to_string(i + 1) + ": " + r.verdict_text();
      runs += (runs.empty() ? "" : ", ") + (target.empty() ? label : "[" + label + "](" + target + ")");
    }
    md += " " + md_cell(runs) + " |\n";
  }
  const std::vector<std::string> problems = suite_problems(suite);
  if (!problems.empty()) {
    md += "\n## Not as predicted\n\n";
    for (const auto& p : problems) md += "- " + p + "\n";
  }
  return md + "\n" + suite_summary(suite) + "\n";
}

nlohmann::json suite_json(const SuiteResult& suite, const std::string& kind) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : suite.rows) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& r : row.runs) {
      runs.push_back({{"seed", r.seed},
                      {"exit_code", r.exit_code},
                      {"run_dir", r.run_dir.string()},
                      {"verdict", r.verdict_text()},
                      {"as_expected", r.verdict.as_expected},
                      {"detected", r.verdict.detected},
                      {"false_alarm", r.verdict.false_alarm},
                      {"mismatches", r.verdict.mismatches},
                      {"broken_checkers", r.verdict.broken},
                      {"first_violation_s", r.first_violation_s ? nlohmann::json(*r.first_violation_s) : nlohmann::json()},
                      {"out_of_reach_s", r.out_of_reach_s ? nlohmann::json(*r.out_of_reach_s) : nlohmann::json()},
                      {"out_of_reach_refused", r.out_of_reach_refused},
                      {"seconds", r.seconds},
                      {"error", r.error}});
    }
    auto median = row.median_first_violation_s();
    rows.push_back({{"id", row.c.id},
                    {"title", row.c.title},
                    {"claim", row.c.claim},
                    {"backend", row.c.backend},
                    {"faults", row.c.faults},
                    {"args", row.c.args},
                    {"expected", expected_text(row.c)},
                    {"safe", row.c.scenario != nullptr && row.c.scenario->safe()},
                    {"detected", row.detected()},
                    {"false_alarms", row.false_alarms()},
                    {"as_expected", row.as_expected()},
                    {"median_first_violation_s", median ? nlohmann::json(*median) : nlohmann::json()},
                    {"blame", blame_text(row)},
                    {"told", told_text(row)},
                    {"runs", runs}});
  }
  return {{"kind", kind},
          {"interrupted", suite.interrupted},
          {"rows", rows},
          {"exit_code", suite_exit_code(suite)},
          {"problems", suite_problems(suite)},
          {"summary", suite_summary(suite)}};
}

int suite_exit_code(const SuiteResult& suite) {
  bool broken = false, mismatch = false, undecided = suite.interrupted;
  for (const auto& row : suite.rows) {
    for (const auto& r : row.runs) {
      if (r.results.is_null()) {
        broken = true;
      } else if (row.c.scenario != nullptr) {
        mismatch |= !r.verdict.as_expected && !r.verdict.undecided;
        undecided |= r.verdict.undecided;
      } else {
        mismatch |= r.verdict_text() == "invalid";
        undecided |= r.verdict_text() == "unknown";
      }
    }
  }
  return broken ? 3 : mismatch ? 1 : undecided ? 2 : 0;
}

void write_suite_junit(const SuiteResult& suite, const fs::path& file) {
  std::vector<JunitSuite> suites;
  for (const auto& row : suite.rows) {
    JunitSuite js{row.c.id + " " + row.c.title, {}};
    for (const auto& r : row.runs) {
      JunitRun jr = junit_run(r.run_dir);
      if (r.run_dir.empty()) {
        jr.name = row.c.id;
        jr.problem = r.error;
      }
      if (row.c.scenario != nullptr) {
        // The scenario's prediction is the test: a predicted violation passes, a miss fails.
        jr.judged_by_prediction = true;
        jr.prediction_misses = r.verdict.mismatches;
      }
      js.runs.push_back(std::move(jr));
    }
    suites.push_back(std::move(js));
  }
  write_junit(file, suites);
}

void write_suite_report(const SuiteResult& suite, const std::string& kind, const fs::path& dir) {
  write_file_atomically(dir / "suite.md", suite_markdown(suite, kind, dir));
  write_file_atomically(dir / "suite.html", html_page(suite, kind, dir));
  write_file_atomically(dir / "suite.json", dump_json(suite_json(suite, kind), 2) + "\n");
}

}  // namespace fencecheck
