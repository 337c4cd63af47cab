#include "report/junit.h"

#include <cstdio>

#include "platform/atomic_file.h"
#include "report/html.h"
#include "report/report_data.h"
#include "report/run_info.h"

namespace fencecheck {

namespace {

using nlohmann::json;
using report::xml_escape;

constexpr std::size_t kDetailViolations = 10;

struct Counts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
};

std::string attr(const char* name, const std::string& value) {
  return std::string(" ") + name + "=\"" + xml_escape(value) + "\"";
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s < 0 ? 0.0 : s);
  return buf;
}

double number_at(const json& j, const char* a, const char* b = nullptr) {
  if (!j.is_object() || !j.contains(a)) return 0;
  const json& x = b == nullptr ? j[a] : (j[a].is_object() && j[a].contains(b) ? j[a][b] : json());
  return x.is_number() ? x.get<double>() : 0;
}

std::string text_at(const json& j, const char* k) {
  return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
}

std::string testcase(const std::string& name, const std::string& classname, double time, const std::string& body) {
  std::string t = "    <testcase" + attr("name", name) + attr("classname", classname) + attr("time", seconds(time));
  return t + (body.empty() ? "/>\n" : ">\n" + body + "    </testcase>\n");
}

// <failure>/<error>/<skipped> with a message and, for failures and errors, a text body.
std::string outcome(const char* element, const std::string& type, const std::string& message, const std::string& text) {
  std::string o = std::string("      <") + element + (type.empty() ? "" : attr("type", type)) + attr("message", message);
  return o + (text.empty() ? "/>\n" : ">" + xml_escape(text) + "</" + element + ">\n");
}

std::string checker_case(const std::string& name, const json& c, const JunitRun& run, Counts& n) {
  ++n.tests;
  const json& valid = c.is_object() && c.contains("valid") ? c["valid"] : json();
  const std::string summary = text_at(c, "summary");
  const double time = number_at(c, "seconds");
  if (valid == true) return testcase(name, run.name, time, "");
  if (valid == "skipped") {
    ++n.skipped;
    return testcase(name, run.name, time, outcome("skipped", "", summary, ""));
  }
  if (valid == false) {
    ++n.failures;
    const json& list = c.contains("violations") && c["violations"].is_array() ? c["violations"] : json::array();
    const std::string first = list.empty() ? summary : report::violation_message(list[0]);
    const std::string count = c.contains("count") && c["count"].is_number_unsigned()
                                  ? std::to_string(c["count"].get<std::uint64_t>())
                                  : std::to_string(list.size());
    // exclusion says what it counts: "4 holds overlapped by 128 acquires"
    std::string text = text_at(c, "count_text");
    if (text.empty()) text = count + (count == "1" ? " violation" : " violations");
    for (std::size_t i = 0; i < list.size() && i < kDetailViolations; ++i) text += "\n- " + report::violation_message(list[i]);
    return testcase(name, run.name, time, outcome("failure", "invalid", first, text));
  }
  ++n.errors;
  return testcase(name, run.name, time, outcome("error", "unknown", summary.empty() ? "undecided" : summary, summary));
}

std::string prediction_case(const JunitRun& run, Counts& n) {
  ++n.tests;
  std::string observed;
  const json& r = *run.results;
  if (r.contains("checkers") && r["checkers"].is_object()) {
    for (const auto& [name, c] : r["checkers"].items()) {
      const json& v = c.is_object() && c.contains("valid") ? c["valid"] : json();
      observed += name + ": " + (v.is_boolean() ? (v.get<bool>() ? "valid" : "invalid") : v.is_string() ? v.get<std::string>() : "?") + "\n";
    }
  }
  const double time = number_at(r, "run", "test_seconds");
  if (run.prediction_misses.empty()) {
    return testcase("prediction", run.name, time, "      <system-out>" + xml_escape(observed) + "</system-out>\n");
  }
  ++n.failures;
  std::string misses;
  for (const auto& m : run.prediction_misses) misses += (misses.empty() ? "" : "; ") + m;
  return testcase("prediction", run.name, time, outcome("failure", "prediction", misses, observed));
}

std::string run_cases(const JunitRun& run, Counts& n) {
  std::string out;
  std::string out_text = run.run_dir.empty() ? "" : "run directory: " + run.run_dir.string();
  if (!run.results || !run.results->is_object()) {
    ++n.tests;
    ++n.errors;
    const std::string why = run.problem.empty() ? "no results" : run.problem;
    return testcase("run", run.name, 0, outcome("error", "no-results", why, out_text));
  }
  const json& r = *run.results;
  n.time += number_at(r, "run", "test_seconds") + number_at(r, "check_seconds");
  if (run.judged_by_prediction) {
    out += prediction_case(run, n);
  } else if (r.contains("checkers") && r["checkers"].is_object()) {
    for (const auto& [name, c] : r["checkers"].items()) out += checker_case(name, c, run, n);
  }
  ++n.tests;
  std::string reasons;
  if (r.contains("unknown_reasons") && r["unknown_reasons"].is_array()) {
    for (const auto& u : r["unknown_reasons"]) reasons += (reasons.empty() ? "" : "; ") + (u.is_string() ? u.get<std::string>() : u.dump());
  }
  if (reasons.empty()) {
    out += testcase("run", run.name, number_at(r, "run", "test_seconds"), out_text.empty() ? "" :
                    "      <system-out>" + xml_escape(out_text) + "</system-out>\n");
  } else {
    ++n.errors;
    out += testcase("run", run.name, number_at(r, "run", "test_seconds"), outcome("error", "undecided", reasons, out_text));
  }
  return out;
}

std::string suite_with_counts(const JunitSuite& s, Counts& n) {
  std::string cases;
  for (const auto& run : s.runs) cases += run_cases(run, n);
  return "  <testsuite" + attr("name", s.name) + attr("tests", std::to_string(n.tests)) +
         attr("failures", std::to_string(n.failures)) + attr("errors", std::to_string(n.errors)) +
         attr("skipped", std::to_string(n.skipped)) + attr("time", seconds(n.time)) + ">\n" + cases + "  </testsuite>\n";
}

}  // namespace

JunitRun junit_run(const std::filesystem::path& run_dir, const std::optional<std::filesystem::path>& results) {
  JunitRun run;
  run.run_dir = run_dir;
  try {
    report::RunInfo info = report::read_run_info(run_dir, results);
    run.name = info.name + "." + info.timestamp;
    run.results = info.results;
    if (!info.results) run.problem = "unfinished: " + run_dir.string() + " has no results.json";
  } catch (const std::exception& e) {
    run.name = run_dir.filename().string();
    run.problem = std::string("unreadable: ") + e.what();
  }
  return run;
}

std::string junit_suite(const JunitSuite& suite) {
  Counts n;
  return suite_with_counts(suite, n);
}

std::string junit_xml(const std::vector<JunitSuite>& suites) {
  Counts all;
  std::string body;
  for (const auto& s : suites) {
    Counts n;
    body += suite_with_counts(s, n);
    all.tests += n.tests;
    all.failures += n.failures;
    all.errors += n.errors;
    all.skipped += n.skipped;
    all.time += n.time;
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + attr("name", "fencecheck") +
         attr("tests", std::to_string(all.tests)) + attr("failures", std::to_string(all.failures)) +
         attr("errors", std::to_string(all.errors)) + attr("time", seconds(all.time)) + ">\n" + body + "</testsuites>\n";
}

void write_junit(const std::filesystem::path& file, const std::vector<JunitSuite>& suites) {
  write_file_atomically(file, junit_xml(suites));
}

}  // namespace fencecheck
