#include "harness/suite/suite_summary.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "harness/suite/suite_report.h"

namespace fencecheck {

namespace {

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

// Why a run without results.json failed, from its SuiteRun::error ("exit 3, no results.json;
// log PATH: TAIL"): the tail's last message of fencecheck's own ("fencecheck run: the nemesis
// failed: …") with the lines it goes on with, not the progress lines that precede it; then the
// exit code and the log. The whole error's first line when it is not of that form.
std::string harness_error_text(const std::string& error) {
  const std::size_t log = error.find("; log ");
  const std::size_t colon = log == std::string::npos ? std::string::npos : error.find(": ", log);
  if (colon == std::string::npos) return one_line(error.substr(0, error.find('\n')));
  std::vector<std::string> lines;
  std::istringstream tail(error.substr(colon + 2));
  for (std::string line; std::getline(tail, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  auto is_ours = [](const std::string& l) {
    return (l.rfind("fencecheck ", 0) == 0 || l.rfind("…fencecheck ", 0) == 0) &&
           l.find("what was recorded is in") == std::string::npos;
  };
  auto why = std::find_if(lines.rbegin(), lines.rend(), is_ours);
  std::string text;
  if (why == lines.rend()) {
    text = lines.empty() ? "" : lines.back();
  } else {
    for (auto it = why.base() - 1; it != lines.end() && (it == why.base() - 1 || !it->starts_with("fencecheck "));
         ++it) {
      text += (text.empty() ? "" : " ") + *it;
    }
  }
  return one_line(text) + " (" + error.substr(0, error.find(", no results.json")) + "; log " +
         error.substr(log + 6, colon - log - 6) + ")";
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
    add("harness error: " + harness_error_text(r.error));
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
        const std::string v = checker_verdict_text(r.results, name);
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

}  // namespace

std::string checker_verdict_text(const nlohmann::json& results, const std::string& checker) {
  if (!results.is_object() || !results.contains("checkers") || !results["checkers"].is_object()) return "missing";
  const nlohmann::json c = results["checkers"].value(checker, nlohmann::json());
  const nlohmann::json v = c.is_object() ? c.value("valid", nlohmann::json()) : nlohmann::json();
  if (v.is_boolean()) return v.get<bool>() ? "valid" : "invalid";
  return v.is_string() ? v.get<std::string>() : "missing";
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

}  // namespace fencecheck
