#include "report/run_report.h"

#include <chrono>

#include "checkers/history_reader.h"
#include "platform/atomic_file.h"
#include "platform/errors.h"
#include "report/assets.h"
#include "report/html.h"
#include "report/liveness.h"
#include "report/report_data.h"
#include "report/report_sections.h"
#include "report/run_info.h"
#include "report/timeline.h"

namespace fencecheck {

namespace fs = std::filesystem;
using namespace report;

namespace {

struct Rendered {
  std::string html;
  std::uint64_t events = 0, violations = 0;
};

void require_run_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(dir.string(), 0, "", "not a run directory: no such directory");
  }
  if (!fs::exists(dir / "history.jsonl", ec)) {
    throw InputError(dir.string(), 0, "", "not a run directory: it has no history.jsonl");
  }
}

std::vector<FaultSpan> spans_of(const Timeline& t) {
  std::vector<FaultSpan> spans;
  for (const auto& f : t.faults) spans.push_back({f.fault, f.start, f.end, f.open_at_end});
  return spans;
}

std::string timeline_html() {
  return "<section id=\"timeline\"><h2>Timeline</h2>"
         "<div id=\"tl-tools\"><button id=\"tl-reset\" type=\"button\">whole run</button>"
         "<button id=\"tl-in\" type=\"button\">zoom in</button><button id=\"tl-out\" type=\"button\">zoom out</button>"
         "<button id=\"tl-mode\" type=\"button\">lanes: per process / per node</button>"
         "<span id=\"fc-status\">drawing…</span></div>"
         "<div class=\"legend\"><span><i style=\"background:#bfdbfe\"></i>lock hold</span>"
         "<span><i style=\"background:#2e9d4a\"></i>ok</span><span><i style=\"background:#9aa0a6\"></i>fail</span>"
         "<span><i style=\"background:#e8891c\"></i>info (unknown)</span>"
         "<span><i style=\"background:#8e44ad\"></i>never completed</span>"
         "<span><i style=\"background:#ffd3d3\"></i>pause</span><span><i style=\"background:#ffe3a8\"></i>partition</span>"
         "<span><i style=\"background:#e2d6ff\"></i>clock</span><span><i style=\"background:#cfe2ff\"></i>kill</span>"
         "<span><i style=\"background:#c62828\"></i>resource refused</span>"
         "<span><i style=\"border:2px solid #d0006f\"></i>named by the chosen violation</span></div>"
         "<div id=\"tl-focus\"></div><div id=\"tl-wrap\"><canvas id=\"timeline-canvas\" height=\"200\"></canvas><div id=\"tl-tip\"></div></div>"
         "<noscript><p>The timeline needs JavaScript.</p></noscript></section>";
}

Rendered render(const fs::path& dir, const ReportOptions& options) {
  require_run_dir(dir);
  RunInfo info = read_run_info(dir, options.results);
  Timeline t = read_timeline(dir);
  const nlohmann::json none = nlohmann::json::object();
  std::vector<ViolationRef> violations = violations_of(info.results ? *info.results : none);
  Liveness live = compute_liveness(t.oks, spans_of(t), t.event_times.empty() ? 0 : t.event_times.front(), t.end_time);

  std::string h;
  h.reserve(1 << 20);
  h += "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
       "script-src 'unsafe-inline'; img-src data:\">"
       "<title>" + html_escape(info.name + " · " + info.verdict + " · fencecheck") + "</title><style>";
  h += kReportCss;
  h += "</style></head><body data-verdict=\"" + html_escape(info.verdict) + "\">\n";
  h += header_html(info, t);
  h += verdicts_html(info);
  h += timeline_html();
  h += violations_html(info, violations);
  h += explanations_html(violations);
  h += liveness_html(live, t);
  std::string warnings;
  for (const auto& w : t.warnings) warnings += "<li>" + html_escape(w) + "</li>";
  if (!warnings.empty()) h += "<section><h2>Reading the run</h2><ul class=\"warnings\">" + warnings + "</ul></section>";
  std::error_code ec;
  h += "<footer>fencecheck report of " + html_escape(fs::weakly_canonical(fs::absolute(dir), ec).string()) + "</footer>\n";
  h += "<script type=\"application/json\" id=\"fc-data\">";
  h += script_json(report_data(t, violations));
  h += "</script>\n<script>";
  h += kReportJs;
  h += "</script>\n</body></html>\n";
  return {std::move(h), t.event_times.size(), violations.size()};
}

}  // namespace

void refuse_recorded_file(const fs::path& dir, const fs::path& out) {
  for (const char* name : {"history.jsonl", "resource.jsonl", "results.json", "config.json", "repro.sh"}) {
    std::error_code ec;
    if (fs::exists(out, ec) && fs::exists(dir / name, ec) && fs::equivalent(out, dir / name, ec)) {
      throw std::invalid_argument(out.string() + " is the run's own " + name +
                                  ", which a report never overwrites; choose another file");
    }
  }
}

std::string render_run_report(const fs::path& run_dir, const ReportOptions& options) {
  return render(run_dir, options).html;
}

ReportWritten write_run_report(const fs::path& run_dir, const ReportOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Rendered r = render(run_dir, options);
  ReportWritten w;
  w.file = options.out.value_or(run_dir / "report.html");
  refuse_recorded_file(run_dir, w.file);
  write_file_atomically(w.file, r.html);
  w.events = r.events;
  w.violations = r.violations;
  w.bytes = r.html.size();
  w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return w;
}

}  // namespace fencecheck
