#include "report/run_index.h"

#include <algorithm>

#include "platform/atomic_file.h"
#include "report/assets.h"
#include "report/html.h"

namespace fencecheck {

namespace fs = std::filesystem;
using report::html_escape;
using report::RunSummary;

namespace {

constexpr int kMaxDepth = 5;  // <store>/suite/<timestamp>/runs/<case>/<timestamp>

void collect(const fs::path& dir, int depth, std::vector<RunSummary>& out) {
  std::error_code ec;
  if (depth > 0 && fs::exists(dir / "config.json", ec)) {
    out.push_back(report::summarize_run(dir));
    return;
  }
  if (depth >= kMaxDepth) return;
  std::vector<fs::path> children;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_directory(ec)) continue;  // `latest`, files
    if (it->path().filename() == "nodes") continue;            // a run's server logs
    children.push_back(it->path());
  }
  for (const auto& c : children) collect(c, depth + 1, out);
}

}  // namespace

std::vector<RunSummary> find_runs(const fs::path& store) {
  std::error_code ec;
  if (!fs::is_directory(store, ec)) throw std::runtime_error(store.string() + ": not a directory (no run store there)");
  std::vector<RunSummary> runs;
  collect(store, 0, runs);
  std::sort(runs.begin(), runs.end(), [](const RunSummary& a, const RunSummary& b) {
    if (a.info.timestamp != b.info.timestamp) return a.info.timestamp > b.info.timestamp;
    return a.info.dir < b.info.dir;
  });
  return runs;
}

std::string run_index_html(const fs::path& store, const std::vector<RunSummary>& runs) {
  std::string rows;
  for (const RunSummary& r : runs) {
    std::error_code ec;
    const bool has_report = fs::exists(r.info.dir / "report.html", ec);
    const fs::path target = has_report ? r.info.dir / "report.html" : r.info.dir;
    const std::string link = fs::relative(target, store, ec).generic_string() + (has_report ? "" : "/");
    const std::string verdict = r.verdict();
    std::string cell = "<span class=\"verdict v-" + html_escape(verdict) + "\">" + html_escape(verdict) + "</span>";
    if (!r.problem.empty()) cell += "<div class=\"note\">" + html_escape(r.problem) + "</div>";
    rows += "<tr><td><a href=\"" + html_escape(link) + "\">" + html_escape(r.info.name) + "</a>" +
            (has_report ? "" : " <span class=\"when\">(no report yet)</span>") + "</td><td>" +
            html_escape(report::display_time(r.info.timestamp)) + "</td><td>" + html_escape(r.info.backend) +
            "</td><td>" + html_escape(report::faults_text(r.info)) + "</td><td>" + cell + "</td></tr>";
  }
  std::string h = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fencecheck runs</title><style>";
  h += report::kReportCss;
  h += "</style></head><body><header><div class=\"title\"><h1>fencecheck runs</h1><div class=\"when\">" +
       html_escape(fs::absolute(store).lexically_normal().string()) + " · " + std::to_string(runs.size()) +
       (runs.size() == 1 ? " run" : " runs") + "</div></div></header>";
  h += "<table id=\"runs\"><thead><tr><th>test</th><th>time</th><th>backend</th><th>faults</th><th>verdict</th></tr>"
       "</thead><tbody>" + rows + "</tbody></table>";
  if (runs.empty()) h += "<p>No runs yet: <code>fencecheck run --store " + html_escape(store.string()) + "</code>.</p>";
  return h + "</body></html>\n";
}

IndexWritten write_run_index(const fs::path& store) {
  std::vector<RunSummary> runs = find_runs(store);
  IndexWritten w;
  w.file = store / "index.html";
  w.runs = runs.size();
  for (const auto& r : runs) {
    std::error_code ec;
    w.unreadable += !r.problem.empty();
    w.without_report += !fs::exists(r.info.dir / "report.html", ec);
  }
  write_file_atomically(w.file, run_index_html(store, runs));
  return w;
}

}  // namespace fencecheck
