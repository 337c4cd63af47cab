#include "harness/suite/suite_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

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

std::string checker_verdict(const nlohmann::json& results, const std::string& checker) {
  const nlohmann::json c = results.value("checkers", nlohmann::json::object()).value(checker, nlohmann::json());
  const nlohmann::json v = c.is_object() ? c.value("valid", nlohmann::json()) : nlohmann::json();
  if (v.is_boolean()) return v.get<bool>() ? "valid" : "invalid";
  return v.is_string() ? v.get<std::string>() : "missing";
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
      if (!r.results.is_null()) ++counts[checker_verdict(r.results, name)];
    }
    for (const auto& [verdict, n] : counts) {
      out += (out.empty() ? "" : ", ") + name + " " + verdict + " " + fraction(n, judged);
    }
  }
  if (broken > 0) out += (out.empty() ? "" : " · ") + std::to_string(broken) + " harness error(s)";
  return out.empty() ? "—" : out;
}

// s on one line, at most max bytes (cut on a UTF-8 character boundary).
std::string one_line(std::string s, std::size_t max = 240) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  }
  if (s.size() <= max) return s;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "…";
}

// What a checker itself said (its "summary"), or "" when the results hold none.
std::string checker_summary(const nlohmann::json& results, const std::string& checker) {
  if (!results.is_object() || !results.contains("checkers") || !results["checkers"].is_object()) return "";
  const nlohmann::json& all = results["checkers"];
  if (!all.contains(checker) || !all[checker].is_object()) return "";
  const nlohmann::json s = all[checker].value("summary", nlohmann::json());
  return s.is_string() ? one_line(s.get<std::string>()) : "";
}

// A run that is not as its case predicts: the suite exit code it stands for, and the line
// that names it.
struct Problem {
  int code;  // 1 a prediction broken (a matrix: a violation), 2 undecided, 3 harness error
  std::string text;
};

// Why run i of row is not as its case predicts; nullopt when it is.
std::optional<Problem> run_problem(const SuiteRow& row, std::size_t i) {
  const SuiteRun& r = row.runs[i];
  Problem p{1, ""};
  auto add = [&p](const std::string& part) { p.text += (p.text.empty() ? "" : "; ") + part; };
  if (r.results.is_null()) {
    p.code = 3;
    add("harness error: " + one_line(r.error.substr(0, r.error.find('\n'))));
  } else if (row.c.scenario != nullptr) {
    if (r.verdict.as_expected) return std::nullopt;
    if (r.verdict.undecided) p.code = 2;
    for (std::size_t m = 0; m < r.verdict.mismatches.size(); ++m) {
      // broken[m] is the checker of mismatches[m]; a mismatch past them is about the whole run.
      std::string said = m < r.verdict.broken.size() ? checker_summary(r.results, r.verdict.broken[m]) : "";
      add(r.verdict.mismatches[m] + (said.empty() ? "" : " (" + said + ")"));
    }
  } else {
    const std::string verdict = r.verdict_text();
    if (verdict == "valid") return std::nullopt;
    if (verdict != "invalid") p.code = 2;
    const nlohmann::json checkers = r.results.is_object() ? r.results.value("checkers", nlohmann::json()) : nullptr;
    if (checkers.is_object()) {
      for (const auto& [name, c] : checkers.items()) {
        const std::string v = checker_verdict(r.results, name);
        if (v == "valid" || v == "skipped") continue;
        std::string said = checker_summary(r.results, name);
        add(name + " " + v + (said.empty() ? "" : " (" + said + ")"));
      }
    }
    if (p.text.empty()) add("the run is " + verdict);
  }
  p.text = row.c.id + " run " + std::to_string(i + 1) + " (seed " + std::to_string(r.seed) + "): " + p.text +
           (r.run_dir.empty() ? "" : " — " + r.run_dir.string());
  return p;
}

std::vector<Problem> problems_of(const SuiteResult& suite) {
  std::vector<Problem> out;
  for (const auto& row : suite.rows) {
    for (std::size_t i = 0; i < row.runs.size(); ++i) {
      if (auto p = run_problem(row, i)) out.push_back(std::move(*p));
    }
  }
  return out;
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
                                           "detected", "false alarms", "median time to first violation"};

Cells cells_of(const SuiteRow& row) {
  return {{row.c.id, row.c.title, row.c.backend, row.c.faults, expected_text(row.c), observed_text(row),
           detection_text(row), false_alarm_text(row), seconds_text(row.median_first_violation_s())}};
}

std::string title_of(const std::string& kind) {
  return kind == "kleppmann" ? "fencecheck suite kleppmann: the article's scenarios, reproduced"
                             : "fencecheck suite matrix: backends × faults";
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
                    {"runs", runs}});
  }
  return {{"kind", kind},
          {"interrupted", suite.interrupted},
          {"rows", rows},
          {"exit_code", suite_exit_code(suite)},
          {"problems", suite_problems(suite)},
          {"summary", suite_summary(suite)}};
}

std::vector<std::string> suite_problems(const SuiteResult& suite) {
  std::vector<std::string> out;
  for (auto& p : problems_of(suite)) out.push_back(std::move(p.text));
  return out;
}

std::string suite_summary(const SuiteResult& suite) {
  const int code = suite_exit_code(suite);
  bool predicted = false;
  std::size_t runs = 0;
  for (const auto& row : suite.rows) {
    predicted |= row.c.scenario != nullptr;
    runs += row.runs.size();
  }
  const char* meaning = code == 0   ? (predicted ? "every run as predicted" : "every run valid")
                        : code == 1 ? (predicted ? "a prediction broken" : "a violation found")
                        : code == 2 ? (suite.interrupted ? "undecided or interrupted" : "a run undecided")
                                    : "a run failed as a harness";
  const std::vector<Problem> problems = problems_of(suite);
  std::string line = "suite: exit " + std::to_string(code) + " (" + meaning + "): " +
                     std::to_string(runs - problems.size()) + " of " + std::to_string(runs) + " run(s) " +
                     (predicted ? "as predicted" : "valid") + (suite.interrupted ? ", interrupted" : "");
  if (problems.empty()) return line;
  // Name the run that decided the exit code, not merely the first one listed.
  auto first = std::find_if(problems.begin(), problems.end(), [code](const Problem& p) { return p.code == code; });
  line += "; " + (first == problems.end() ? problems.front() : *first).text;
  if (problems.size() > 1) line += "; " + std::to_string(problems.size() - 1) + " more listed above";
  return line;
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
