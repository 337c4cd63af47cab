#include "harness/budget/datasheet_render.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/budget/budget_faults.h"
#include "platform/json_member.h"
#include "platform/atomic_file.h"
#include "platform/json_text.h"
#include "report/html.h"

namespace fencecheck {
namespace {

using report::html_escape;

namespace fs = std::filesystem;
using nlohmann::json;

std::string text(const json& j, const char* name, const std::string& fallback = "—") {
  if (!j.is_object() || !j.contains(name) || j[name].is_null()) return fallback;
  return j[name].is_string() ? j[name].get<std::string>() : j[name].dump();
}

std::string classes_text(const json& classes) {
  std::string out;
  if (!classes.is_object()) return "—";
  for (const auto& [name, n] : classes.items()) out += (out.empty() ? "" : ", ") + name + " " + n.dump();
  return out.empty() ? "none" : out;
}

std::string data_text(const json& data) {
  if (!data.is_object()) return "—";
  if (data.value("safe", false)) return "safe in " + text(data, "tries") + " tries";
  if (data.contains("lost_up_to_ms")) return "lost up to " + text(data, "lost_up_to_ms") + " ms";
  return "lost from " + text(data, "lost_from_ms") + " ms";
}

// "told 2 of 3 violations' holders, 40 ms after the other grant (median; p90 60, max 80)".
std::string notice_text(const json& notice) {
  if (!notice.is_object()) return "—";
  const std::int64_t told = notice.value("told", 0), silent = notice.value("silent", 0);
  if (told + silent == 0) return "no violation";
  std::string out = "told " + std::to_string(told) + " of " + std::to_string(told + silent) + " violations' holders";
  if (notice.contains("latency_ms")) {
    const json& l = notice["latency_ms"];
    char buf[128];
    std::snprintf(buf, sizeof buf, ", %.0f ms after the other grant (median; p90 %.0f, max %.0f)", l.value("median", 0.0),
                  l.value("p90", 0.0), l.value("max", 0.0));
    out += buf;
  }
  return out;
}

std::string token_text(const json& token) {
  return text(token, "kind") + "; after every server crashed: " + text(token, "after_every_server_crashed");
}

// A page's head, its style (no script: readable offline) and its heading.
std::string page_start(const std::string& title) {
  return "<!doctype html><html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
         "</title><style>body{font-family:sans-serif;max-width:72em;margin:2em auto}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top}</style></head><body><h1>" +
         html_escape(title) + "</h1>\n";
}

// Every fault any sheet measured, in the registry's order: the table's columns.
std::vector<std::string> fault_columns(const std::vector<json>& sheets) {
  std::vector<std::string> faults;
  for (const BudgetFault& f : budget_faults()) {
    for (const auto& s : sheets) {
      for (const auto& row : s["faults"]) {
        if (text(row, "fault") == f.name && std::find(faults.begin(), faults.end(), f.name) == faults.end()) {
          faults.push_back(f.name);
        }
      }
    }
  }
  return faults;
}

json read_json_file(const fs::path& file) {
  std::ifstream in(file);
  return json::parse(in, nullptr, false);
}

}  // namespace

std::string budget_cell(const json& row) {
  if (row.contains("refused")) return "refused";
  const json& b = json_member(row, "budget");
  const json& options = json_member(b, "options");
  if (!b.is_object() || !options.is_object()) return "—";
  const std::string outcome = b.value("outcome", "undecided");
  if (outcome == "boundary" && json_member(b, "safe_at").is_number_integer() && json_member(b, "broken_at").is_number_integer()) {
    const std::int64_t safe = json_member(b, "safe_at").get<std::int64_t>(), broken = json_member(b, "broken_at").get<std::int64_t>();
    return std::to_string(std::min(safe, broken)) + "–" + std::to_string(std::max(safe, broken)) + " ms" +
           (b.value("budget_exhausted", false) ? " (budget spent)" : "");
  }
  // The breaking end (hi; lo for a restart delay) was safe, or the safe end broke.
  const bool below = options.value("breaks", "above") == "below";
  const std::string lo = text(options, "lo"), hi = text(options, "hi");
  if (outcome == "safe-everywhere") return below ? "kept down to " + lo + " ms" : "kept to " + hi + " ms";
  if (outcome == "broken-everywhere") return below ? "broken up to " + hi + " ms" : "broken from " + lo + " ms";
  return "undecided";
}

std::string datasheet_markdown(const json& s) {
  std::ostringstream m;
  m << "# Datasheet: " << text(s, "backend") << " (" << text(s, "client") << ")\n\n"
    << "Profile " << text(s, "profile") << "; lease " << text(s, "lease_ms") << " ms; resource fenced."
    << (s.value("interrupted", false) ? " **Interrupted: what was measured so far.**" : "") << "\n\n"
    << "- **Promise**: " << text(s, "promise") << "\n"
    << "- **Token**: " << token_text(s.value("token", json())) << "\n"
    << "- **Notice**: " << notice_text(s.value("notice", json())) << "\n\n"
    << "| fault | budget | promise, as measured | violation classes | data (fenced) |\n|---|---|---|---|---|\n";
  for (const auto& f : s.at("faults")) {
    m << "| " << text(f, "fault") << " | " << budget_cell(f) << " | "
      << (f.contains("refused") ? "refused: " + text(f, "refused") : text(f, "measured")) << " | "
      << (f.contains("refused") ? "—" : classes_text(f.value("classes", json()))) << " | " << data_text(f.value("data", json()))
      << " |\n";
  }
  return m.str();
}

std::string datasheet_html(const json& s) {
  std::ostringstream h;
  h << page_start("Datasheet: " + text(s, "backend") + " (" + text(s, "client") + ")") << "<p>Profile " << html_escape(text(s, "profile")) << "; lease " << html_escape(text(s, "lease_ms"))
    << " ms; resource fenced." << (s.value("interrupted", false) ? " <strong>Interrupted.</strong>" : "") << "</p>\n"
    << "<ul><li><b>Promise</b>: " << html_escape(text(s, "promise")) << "</li><li><b>Token</b>: "
    << html_escape(token_text(s.value("token", json()))) << "</li><li><b>Notice</b>: "
    << html_escape(notice_text(s.value("notice", json()))) << "</li></ul>\n";
  for (const auto& f : s.at("faults")) {
    h << "<section class=\"fault\" data-fault=\"" << html_escape(text(f, "fault")) << "\"><h2>" << html_escape(text(f, "fault"))
      << ": " << html_escape(budget_cell(f)) << "</h2><p>" << html_escape(text(f, "description")) << "</p>";
    if (f.contains("refused")) {
      h << "<p>Refused: " << html_escape(text(f, "refused")) << "</p>";
    } else {
      h << "<p><b>As measured</b>: " << html_escape(text(f, "measured")) << ". Classes: "
        << html_escape(classes_text(f.value("classes", json()))) << ". Data: " << html_escape(data_text(f.value("data", json())))
        << ". <a href=\"" << html_escape(text(f, "dir")) << "/budget.md\">every probe</a></p>" << text(f, "plot", "");
    }
    h << "</section>\n";
  }
  h << "</body></html>\n";
  return h.str();
}

void write_datasheet(const fs::path& dir, const json& sheet) {
  json doc = sheet;
  for (auto& f : doc["faults"]) f.erase("plot");  // drawn in the html, from budget.json's probes
  write_file_atomically(dir / "datasheet.json", dump_json(doc, 2) + "\n");
  write_file_atomically(dir / "datasheet.md", datasheet_markdown(sheet));
  write_file_atomically(dir / "datasheet.html", datasheet_html(sheet));
}

std::vector<json> find_datasheets(const fs::path& root) {
  std::vector<json> out;
  std::error_code ec;
  for (const auto& config : fs::directory_iterator(root, ec)) {
    if (!config.is_directory()) continue;
    std::vector<fs::path> stamps;
    for (const auto& st : fs::directory_iterator(config.path(), ec)) {
      if (fs::exists(st.path() / "datasheet.json")) stamps.push_back(st.path());
    }
    if (stamps.empty()) continue;
    const fs::path newest = *std::max_element(stamps.begin(), stamps.end());
    json sheet = read_json_file(newest / "datasheet.json");
    if (!sheet.is_object() || !sheet.contains("faults")) {
      std::cerr << "fencecheck datasheet: skipping " << (newest / "datasheet.json").string() << ": not a datasheet\n";
      continue;
    }
    sheet["path"] = fs::relative(newest, root).string();
    out.push_back(std::move(sheet));
  }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return std::pair(text(a, "backend"), text(a, "client")) < std::pair(text(b, "backend"), text(b, "client"));
  });
  return out;
}

std::string comparison_markdown(const std::vector<json>& sheets, const std::string& heading) {
  const std::vector<std::string> faults = fault_columns(sheets);
  std::ostringstream m;
  m << heading << "\n\n| lock | lease | token | notice |";
  for (const auto& f : faults) m << " " << f << " |";
  m << "\n|---|---:|---|---|";
  for (std::size_t i = 0; i < faults.size(); ++i) m << "---|";
  m << "\n";
  for (const auto& s : sheets) {
    m << "| [" << text(s, "backend") << " (" << text(s, "client") << ")](" << text(s, "path") << "/datasheet.md) | "
      << text(s, "lease_ms") << " ms | " << text(s.value("token", json()), "kind") << " | "
      << notice_text(s.value("notice", json())) << " |";
    for (const auto& name : faults) {
      std::string cell = "—";
      for (const auto& f : s["faults"]) cell = text(f, "fault") == name ? budget_cell(f) : cell;
      m << " " << cell << " |";
    }
    m << "\n";
  }
  return m.str();
}

void write_comparison(const fs::path& root, const std::vector<json>& sheets, const std::string& heading) {
  json doc = {{"heading", heading}, {"sheets", json::array()}};
  for (const auto& s : sheets) {
    json row = {{"backend", text(s, "backend")}, {"client", text(s, "client")}, {"path", text(s, "path")},
                {"lease_ms", json_member(s, "lease_ms")}, {"token", json_member(s, "token")},
                {"notice", json_member(s, "notice")}, {"faults", json::object()}};
    for (const auto& f : s["faults"]) row["faults"][text(f, "fault")] = budget_cell(f);
    doc["sheets"].push_back(row);
  }
  const std::string md = comparison_markdown(sheets, heading);
  write_file_atomically(root / "datasheets.json", dump_json(doc, 2) + "\n");
  write_file_atomically(root / "datasheets.md", md);
  std::ostringstream h;
  h << page_start(heading) << "<table><tr><th>lock</th><th>lease</th><th>token</th><th>notice</th>";
  const std::vector<std::string> faults = fault_columns(sheets);
  for (const auto& name : faults) h << "<th>" << html_escape(name) << "</th>";
  h << "</tr>";
  for (const auto& row : doc["sheets"]) {
    h << "<tr><td><a href=\"" << html_escape(text(row, "path")) << "/datasheet.html\">" << html_escape(text(row, "backend"))
      << " (" << html_escape(text(row, "client")) << ")</a></td><td>" << html_escape(text(row, "lease_ms")) << " ms</td><td>"
      << html_escape(text(row["token"], "kind")) << "</td><td>"
      << html_escape(notice_text(row["notice"])) << "</td>";
    for (const auto& name : faults) h << "<td>" << html_escape(row["faults"].value(name, "—")) << "</td>";
    h << "</tr>";
  }
  h << "</table></body></html>\n";
  write_file_atomically(root / "datasheets.html", h.str());
}

}  // namespace fencecheck
