#include "report/report_sections.h"
#include "platform/json_member.h"

#include <cstdio>
#include <filesystem>
#include <map>

#include "checkers/history.h"
#include "report/html.h"
#include "report/stuck_locks.h"

namespace fencecheck::report {

namespace {

using nlohmann::json;

std::string esc(const std::string& s) { return html_escape(s); }

// Fields of a results document read without trusting it: a wrong type gives the default.
std::string str_of(const json& j, const char* k, const std::string& def = "") {
  return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : def;
}
std::uint64_t uint_of(const json& j, const char* k, std::uint64_t def = 0) {
  return j.is_object() && j.contains(k) && j[k].is_number_unsigned() ? j[k].get<std::uint64_t>() : def;
}
bool bool_of(const json& j, const char* k) { return j.is_object() && j.contains(k) && j[k].is_boolean() && j[k].get<bool>(); }

std::string tag(const char* name, const std::string& escaped_body, const std::string& cls = "") {
  std::string open = std::string("<") + name + (cls.empty() ? "" : " class=\"" + esc(cls) + "\"") + ">";
  return open + escaped_body + "</" + name + ">";
}

std::string seconds_of(Nanos t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(t) / 1e9);
  return buf;
}

std::string rate_text(const std::optional<double>& r) {
  if (!r) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", *r);
  return buf;
}

const json& checkers_of(const RunInfo& info) {
  static const json kNone = json::object();
  if (!info.results || !info.results->contains("checkers") || !(*info.results)["checkers"].is_object()) return kNone;
  return (*info.results)["checkers"];
}

std::string verdict_text(const json& valid) {
  if (valid.is_boolean()) return valid.get<bool>() ? "valid" : "invalid";
  return valid.is_string() ? valid.get<std::string>() : "?";
}

std::string string_list(const RunInfo& info, const char* field, const char* cls) {
  if (!info.results || !info.results->contains(field) || !(*info.results)[field].is_array()) return "";
  std::string items;
  for (const auto& r : (*info.results)[field]) {
    items += tag("li", esc(r.is_string() ? r.get<std::string>() : r.dump()));
  }
  return items.empty() ? "" : tag("ul", items, cls);
}

std::string fact(const std::string& name, const std::string& value) {
  return "<div class=\"fact\"><span>" + esc(name) + "</span><b>" + esc(value.empty() ? "—" : value) + "</b></div>";
}

// The rows of an explanation table.
std::string op_rows(const json& ops, const char* cls) {
  std::string rows;
  if (!ops.is_array()) return rows;
  for (const auto& op : ops) {
    if (!op.is_object()) continue;
    std::string c = cls;
    if (bool_of(op, "in_prefix")) c += " in-prefix";
    rows += "<tr class=\"" + c + "\"><td>" + esc(cls) + (bool_of(op, "in_prefix") ? " (in prefix)" : "") +
            "</td><td>" + esc(str_of(op, "description", op.dump())) + "</td></tr>";
  }
  return rows;
}

std::int64_t int_of(const json& j, const char* k, std::int64_t def = 0) {
  return j.is_object() && j.contains(k) && j[k].is_number_integer() ? j[k].get<std::int64_t>() : def;
}

// One hold of an exclusion group: "process 2 (c2) acquired it at 0.010 s, held to 0.015 s
// (release), token 7".
std::string inside_hold_text(const json& h) {
  std::string s = describe_process(int_of(h, "process"), str_of(h, "node")) + " acquired it at " +
                  format_seconds(int_of(h, "start"));
  const std::string ended_by = str_of(h, "ended_by");
  s += ended_by == "end-of-history" ? ", held to the end of the history"
                                    : ", held to " + format_seconds(int_of(h, "end")) + " (" + ended_by + ")";
  if (json_member(h, "token").is_number_integer()) s += ", token " + std::to_string(int_of(h, "token"));
  return s;
}

// Under an exclusion group (a hold and the acquires of others inside it): the first few
// acquires, and how many more results.json counted.
std::string inside_html(const json& v) {
  const json& inside = json_member(v, "inside");
  if (!inside.is_array() || inside.empty()) return "";
  std::string items;
  for (const auto& h : inside) items += tag("li", esc(inside_hold_text(h)));
  const std::uint64_t all = uint_of(v, "acquires_inside", inside.size());
  if (all > inside.size()) {
    const std::uint64_t more = all - inside.size();
    items += tag("li", "… and " + std::to_string(more) + (more == 1 ? " more acquire" : " more acquires") +
                           " inside this hold (" + std::to_string(all) + " in all)", "more");
  }
  return tag("ul", items, "inside");
}

}  // namespace

std::string format_duration(Nanos d) {
  char buf[32];
  if (d < 1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(d) / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(d) / 1e9);
  }
  return buf;
}

// The faults the run's runtime could not inject, grouped by why: what this run could not
// have found.
std::string unavailable_html(const std::map<std::string, std::string>& unavailable) {
  if (unavailable.empty()) return "";
  std::map<std::string, std::string> by_reason;
  for (const auto& [fault, why] : unavailable) by_reason[why] += (by_reason[why].empty() ? "" : ", ") + fault;
  std::string h = "<section class=\"unavailable\" id=\"unavailable\"><b>not available under this runtime</b><ul>";
  for (const auto& [why, faults] : by_reason) h += "<li>" + esc(faults) + ": " + esc(why) + "</li>";
  return h + "</ul></section>";
}

std::string header_html(const RunInfo& info, const Timeline& t) {
  std::string h = "<header><div class=\"title\"><h1>" + esc(info.name) + "</h1><div class=\"when\">" +
                  esc(display_time(info.timestamp)) + "</div></div>";
  h += "<div class=\"verdict big v-" + esc(info.verdict) + "\" id=\"verdict\">" + esc(info.verdict) + "</div></header>";
  h += "<section class=\"facts\">" + fact("backend", info.backend) + fact("workload", info.workload) +
       fact("resource", info.resource) + fact("faults", faults_text(info)) +
       fact("seed", info.seed ? std::to_string(*info.seed) : "") + fact("events", std::to_string(t.event_times.size())) +
       fact("length", seconds_of(t.end_time)) + fact("runtime", info.runtime) + "</section>";
  h += unavailable_html(info.unavailable_faults);
  std::string repro;
  std::error_code ec;
  if (std::filesystem::exists(info.dir / "repro.sh", ec)) {
    // The run's own directory, not `latest`, which moves on with the next run.
    const std::filesystem::path dir = std::filesystem::weakly_canonical(std::filesystem::absolute(info.dir), ec);
    repro += "<div>replay: <code>" + esc((dir / "repro.sh").string()) + "</code></div>";
  }
  if (!info.command.empty()) {
    std::string cmd = "fencecheck run";
    for (const auto& a : info.command) cmd += " " + shell_word(a);
    repro += "<div>rerun with fresh faults from the seed: <code>" + esc(cmd) + "</code></div>";
  }
  if (!info.has_config) repro += "<div>no config.json in " + esc(info.dir.string()) + "</div>";
  if (info.verdict == "unfinished") {
    repro += "<div class=\"note\">unfinished: the run has no results.json (judge it with <code>fencecheck check " +
             esc(shell_word(info.dir.string())) + " --out FILE</code>, then <code>fencecheck report … --results FILE</code>)</div>";
  }
  h += "<section class=\"repro\">" + repro + "</section>";
  h += string_list(info, "unknown_reasons", "reasons") + string_list(info, "warnings", "warnings");
  return h;
}

std::string verdicts_html(const RunInfo& info) {
  const json& checkers = checkers_of(info);
  if (checkers.empty()) return "<section><h2>Checkers</h2><p>No verdicts (no results.json).</p></section>";
  std::string rows;
  for (const auto& [name, c] : checkers.items()) {
    if (!c.is_object()) continue;
    const std::string v = verdict_text(json_member(c, "valid"));
    const json& list = c.contains("violations") && c["violations"].is_array() ? c["violations"] : json::array();
    const std::uint64_t count = uint_of(c, "count");
    std::string n = str_of(c, "count_text", std::to_string(count));  // exclusion: "4 holds overlapped by …"
    if (list.size() < count) n += " (" + std::to_string(list.size()) + " shown)";
    const std::string first = !list.empty() ? violation_message(list[0]) : str_of(c, "summary");
    rows += "<tr><td>" + esc(name) + "</td><td><span class=\"verdict v-" + esc(v) + "\">" + esc(v) + "</span></td><td>" +
            esc(n) + "</td><td>" + esc(first) + "</td></tr>";
  }
  return "<section><h2>Checkers</h2><table class=\"verdicts\"><thead><tr><th>checker</th><th>verdict</th>"
         "<th>violations</th><th>first violation / summary</th></tr></thead><tbody>" +
         rows + "</tbody></table></section>";
}

namespace {
// "<span class="blame">overstayed · told never</span> " for an exclusion violation.
std::string blame_badge(const json& v) {
  if (!v.is_object() || !v.contains("blame") || !v["blame"].is_object()) return "";
  const json& b = v["blame"];
  const std::string cls = b.value("class", "");
  if (cls.empty() || cls == "unclassified") return "";
  return "<span class=\"blame\" data-blame=\"" + esc(cls) + "\">" + esc(cls) + " · told " + esc(b.value("told", "")) +
         "</span> ";
}
}  // namespace

std::string violations_html(const RunInfo& info, const std::vector<ViolationRef>& violations) {
  std::string items;
  for (std::size_t k = 0; k < violations.size(); ++k) {
    const ViolationRef& v = violations[k];
    items += "<li data-v=\"" + std::to_string(k) + "\" id=\"v-" + std::to_string(k) + "\"><a href=\"#timeline\">" +
             "<span class=\"checker\">" + esc(v.checker) + "</span> " + blame_badge(*v.violation) +
             esc(violation_message(*v.violation)) +
             "</a>" + inside_html(*v.violation) + "</li>";
  }
  std::string more;
  for (const auto& [name, c] : checkers_of(info).items()) {
    if (!c.is_object()) continue;
    const std::uint64_t count = uint_of(c, "count"), shown = uint_of(c, "shown", count);
    if (shown < count) {
      more += tag("li", esc(name) + ": " + std::to_string(count - shown) + " more not listed in results.json");
    }
  }
  return "<section id=\"violations-section\"><h2>Violations</h2>" +
         (violations.empty() ? std::string("<p>None listed.</p>") : "") +
         "<ol id=\"violations\" class=\"violations\">" + items + "</ol>" +
         (more.empty() ? "" : "<ul class=\"more\">" + more + "</ul>") + "</section>";
}

std::string explanations_html(const std::vector<ViolationRef>& violations) {
  std::string out;
  for (std::size_t k = 0; k < violations.size(); ++k) {
    const json& v = *violations[k].violation;
    if (!v.is_object() || !v.contains("prefix_length")) continue;
    out += "<div class=\"explain\" data-v=\"" + std::to_string(k) + "\"><h3>" + esc(violations[k].checker) + ": key " +
           esc(str_of(v, "key", "?")) + " as a " + esc(str_of(v, "model", "?")) + "</h3>";
    out += tag("p", esc(str_of(v, "reason")));
    out += "<p>Longest linearizable prefix: <b>" + esc(v["prefix_length"].dump()) + "</b> ops; state after it: <b>" +
           esc(str_of(v, "state_after_prefix", "?")) + "</b>. Concurrent with the op: <b>" +
           std::to_string(uint_of(v, "concurrent_count")) + "</b>.</p>";
    out += "<canvas class=\"lin\" data-v=\"" + std::to_string(k) + "\" width=\"900\" height=\"120\"></canvas>";
    out += "<table class=\"ops\"><tbody>" + op_rows(json_member(v, "prefix_tail"), "prefix") +
           op_rows(json::array({json_member(v, "op")}), "blocked") + op_rows(json_member(v, "concurrent"), "concurrent") +
           "</tbody></table></div>";
  }
  return out.empty() ? "" : "<section id=\"explain\"><h2>Linearizability</h2>" + out + "</section>";
}

namespace {

// Locks nobody held that nobody could take (report/stuck_locks.h), longest first.
std::string stuck_locks_html(const std::vector<StuckLock>& stuck) {
  if (stuck.empty()) return "<p>No lock stayed out of reach: every refused acquire came while a client held its key.</p>";
  std::string rows;
  for (const StuckLock& s : stuck) {
    rows += "<tr><td>" + esc(s.key) + "</td><td>" + seconds_of(s.from) + "</td><td>" + seconds_of(s.to) + "</td><td>" +
            format_duration(s.to - s.from) + "</td><td>" + std::to_string(s.refused) + "</td></tr>";
  }
  return "<p>Locks nobody held that nobody could take: acquires refused while no client held the key (a "
         "contender left behind, a retired holder's session the server still keeps).</p>"
         "<table class=\"stuck-locks\"><thead><tr><th>key</th><th>from</th><th>to</th><th>length</th>"
         "<th>refused acquires</th></tr></thead><tbody>" + rows + "</tbody></table>";
}

}  // namespace

std::string liveness_html(const Liveness& l, const Timeline& t) {
  std::string head = "<tr><th>fault</th><th>targets</th><th>from</th><th>to</th><th>length</th><th>ok/s during</th>"
                     "<th>ok/s after (same length)</th><th>first ok after heal</th>";
  for (OpFn k : l.kinds) head += "<th>recovery: " + esc(std::string(to_string(k))) + "</th>";
  head += "</tr>";
  std::string rows;
  for (std::size_t i = 0; i < l.windows.size(); ++i) {
    const WindowLiveness& w = l.windows[i];
    const std::string targets = i < t.faults.size() ? t.faults[i].targets : "";
    auto recovery = [&](const std::optional<Nanos>& r) {
      return w.span.open_at_end ? std::string("open at end") : r ? format_duration(*r) : std::string("never");
    };
    rows += "<tr><td>" + esc(w.span.fault) + "</td><td>" + esc(targets) + "</td><td>" + seconds_of(w.span.start) +
            "</td><td>" + (w.span.open_at_end ? "end (open)" : seconds_of(w.span.end)) + "</td><td>" +
            format_duration(w.span.end - w.span.start) + "</td><td>" + rate_text(w.during_ok_per_s) + "</td><td>" +
            rate_text(w.after_ok_per_s) +
            (w.after_ok_per_s && w.after_length < w.span.end - w.span.start ? " (cut: " + format_duration(w.after_length) + ")" : "") +
            "</td><td>" + recovery(w.recovery_any) + "</td>";
    for (OpFn k : l.kinds) {
      auto it = w.recovery.find(k);
      rows += "<td>" + recovery(it == w.recovery.end() ? std::nullopt : it->second) + "</td>";
    }
    rows += "</tr>";
  }
  std::string out = "<section id=\"liveness\"><h2>Liveness</h2><p>Whole run: <b>" + rate_text(l.overall_ok_per_s) +
                    "</b> ok ops/s.</p>" + stuck_locks_html(stuck_locks(t));
  if (l.windows.empty()) return out + "<p>No fault windows.</p></section>";
  return out + "<table class=\"liveness\"><thead>" + head + "</thead><tbody>" + rows + "</tbody></table></section>";
}

}  // namespace fencecheck::report
