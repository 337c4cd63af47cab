#include "harness/budget/budget_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "platform/atomic_file.h"
#include "platform/json_text.h"
#include "report/html.h"

namespace fencecheck {
namespace {

using report::html_escape;

using nlohmann::json;

std::string fixed(double v, int decimals = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

json classes_over_tries(const BudgetResult& result) {
  json total = json::object();
  for (const Probe& p : result.probes) {
    for (const ProbeTry& t : p.tries) {
      if (!t.detail.is_object() || !t.detail.contains("classes")) continue;
      for (const auto& [name, n] : t.detail["classes"].items()) total[name] = total.value(name, 0) + n.get<int>();
    }
  }
  return total;
}

int budget_exit_code(const BudgetResult& result, bool interrupted) {
  if (interrupted) return 2;
  if (!result.stopped_by.empty()) return 3;
  if (!result.probes.empty()) {
    const auto& tries = result.probes.back().tries;
    const bool all_harness = !tries.empty() && std::all_of(tries.begin(), tries.end(), [](const ProbeTry& t) {
      return t.result == ProbeTry::Result::kHarnessError;
    });
    if (all_harness) return 3;
  }
  return result.exit_code();
}

json budget_document(const BudgetFault& fault, const RunConfig& config, const std::vector<std::string>& watched,
                     const BudgetResult& result, bool interrupted, std::optional<int> exit_code) {
  return {{"fault", fault.name},
          {"magnitude", fault.magnitude},
          {"description", fault.description},
          {"breaks", to_string(fault.breaks)},
          {"lease_ms", lease_ms(config)},
          {"backend", config.backend},
          {"client", config.opts.text("client")},
          {"watched", watched},
          {"config", config.to_json()},
          {"search", result.to_json()},
          {"classes", classes_over_tries(result)},
          {"interrupted", interrupted},
          {"exit", exit_code.value_or(budget_exit_code(result, interrupted))}};
}

std::string rate_plot_svg(const BudgetResult& r, const std::string& magnitude, std::int64_t lease_ms) {
  constexpr double kW = 480, kH = 180, kLeft = 44, kRight = 12, kTop = 12, kBottom = 34;
  const double lo = static_cast<double>(r.options.lo), hi = static_cast<double>(std::max(r.options.hi, r.options.lo + 1));
  auto x = [&](double v) { return kLeft + (v - lo) / (hi - lo) * (kW - kLeft - kRight); };
  auto y = [&](double rate) { return kTop + (1 - rate) * (kH - kTop - kBottom); };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rate-plot\" width=\"" << kW << "\" height=\"" << kH
    << "\" viewBox=\"0 0 " << kW << " " << kH << "\" font-family=\"sans-serif\" font-size=\"10\">\n";
  s << "<title>violation rate against " << html_escape(magnitude) << " (ms)</title>\n";
  if (r.safe_at && r.broken_at) {  // the bracket: where the boundary lies
    const double a = x(static_cast<double>(std::min(*r.safe_at, *r.broken_at)));
    const double b = x(static_cast<double>(std::max(*r.safe_at, *r.broken_at)));
    s << "<rect class=\"bracket\" x=\"" << fixed(a, 1) << "\" y=\"" << kTop << "\" width=\"" << fixed(std::max(b - a, 1.0), 1)
      << "\" height=\"" << kH - kTop - kBottom << "\" fill=\"#fde68a\"/>\n";
  }
  s << "<line x1=\"" << kLeft << "\" y1=\"" << y(0) << "\" x2=\"" << kW - kRight << "\" y2=\"" << y(0)
    << "\" stroke=\"#333\"/>\n<line x1=\"" << kLeft << "\" y1=\"" << y(1) << "\" x2=\"" << kLeft << "\" y2=\"" << y(0)
    << "\" stroke=\"#333\"/>\n";
  for (double rate : {0.0, 0.5, 1.0}) {
    s << "<text x=\"" << kLeft - 4 << "\" y=\"" << fixed(y(rate) + 3, 1) << "\" text-anchor=\"end\">" << fixed(rate * 100)
      << "%</text>\n";
  }
  for (double v : {lo, (lo + hi) / 2, hi}) {
    s << "<text x=\"" << fixed(x(v), 1) << "\" y=\"" << kH - kBottom + 13 << "\" text-anchor=\"middle\">" << fixed(v)
      << "</text>\n";
  }
  s << "<text x=\"" << (kW + kLeft) / 2 << "\" y=\"" << kH - 4 << "\" text-anchor=\"middle\">" << html_escape(magnitude)
    << " (ms)</text>\n";
  if (lease_ms >= lo && lease_ms <= hi) {
    s << "<line class=\"lease\" x1=\"" << fixed(x(static_cast<double>(lease_ms)), 1) << "\" y1=\"" << kTop << "\" x2=\""
      << fixed(x(static_cast<double>(lease_ms)), 1) << "\" y2=\"" << y(0)
      << "\" stroke=\"#2563eb\" stroke-dasharray=\"4 3\"><title>lease " << lease_ms << " ms</title></line>\n";
  }
  for (const Probe& p : r.probes) {
    const int decided = p.decided();
    const double rate = decided > 0 ? static_cast<double>(p.broke()) / decided : 0;
    const char* fill = p.verdict == Probe::Verdict::kBroken ? "#dc2626"
                       : p.verdict == Probe::Verdict::kSafe ? "#16a34a"
                                                            : "#9ca3af";
    s << "<circle class=\"probe " << to_string(p.verdict) << "\" cx=\"" << fixed(x(static_cast<double>(p.magnitude)), 1)
      << "\" cy=\"" << fixed(y(rate), 1) << "\" r=\"4\" fill=\"" << fill << "\"><title>" << p.magnitude << " ms: "
      << p.broke() << "/" << decided << " tries broke (" << to_string(p.verdict) << ")</title></circle>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string budget_markdown(const json& doc) {
  const json& search = doc.at("search");
  std::ostringstream s;
  s << "# Budget: " << doc.value("backend", "") << " (" << doc.value("client", "") << ") × " << doc.value("fault", "")
    << "\n\n"
    << doc.value("description", "") << ". X is the " << doc.value("magnitude", "") << " in ms; violations lie "
    << doc.value("breaks", "") << " the boundary; watched: " << doc.at("watched").dump() << "; lease "
    << doc.value("lease_ms", 0) << " ms.\n\n**" << search.value("summary", "") << "**\n\n";
  if (doc.at("interrupted").get<bool>()) s << "Interrupted (Ctrl-C): what was probed stands.\n\n";
  if (!doc.at("classes").empty()) s << "Violation classes over every try: " << doc.at("classes").dump() << "\n\n";
  s << "| X (ms) | verdict | broke / decided | tries | seconds |\n|---:|---|---|---:|---:|\n";
  for (const auto& p : search.at("probes")) {
    s << "| " << p.value("magnitude", 0) << " | " << p.value("verdict", "") << " | " << p.value("broke", 0) << "/"
      << p.value("decided", 0) << " | " << p.at("tries").size() << " | " << fixed(p.value("seconds", 0.0)) << " |\n";
  }
  s << "\n![violation rate](budget.svg)\n";
  return s.str();
}

void write_budget(const std::filesystem::path& dir, const json& doc, const BudgetResult& result) {
  write_file_atomically(dir / "budget.json", dump_json(doc, 2) + "\n");
  write_file_atomically(dir / "budget.md", budget_markdown(doc));
  write_file_atomically(dir / "budget.svg", rate_plot_svg(result, doc.value("magnitude", "X"), doc.value("lease_ms", 0)));
}

}  // namespace fencecheck
