// The static parts of report.html, as HTML fragments: the header, the verdict table, the
// violation list, the linearizability explanations and the liveness figures. Everything
// from the run is escaped (html.h). The script (assets/) adds the drawing and the links
// from violations to the timeline on top of these. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "report/liveness.h"
#include "report/report_data.h"
#include "report/run_info.h"
#include "report/timeline.h"

namespace fencecheck::report {

// "312.5 ms" below a second, else "1.204 s".
std::string format_duration(Nanos d);

// Test name, run time, backend, workload, resource, faults, seed, the verdict (big), the
// command that reruns it, and what made the run undecided.
std::string header_html(const RunInfo& info, const Timeline& t);
// One row per checker: verdict, violations (shown of count), the first violation.
std::string verdicts_html(const RunInfo& info);
// Every listed violation, each an <li data-v="k"> that the script links to the timeline;
// under an exclusion group, the first acquires inside its hold and how many more.
std::string violations_html(const RunInfo& info, const std::vector<ViolationRef>& violations);
// Per linearizability violation: the op that could not be placed, the end of the longest
// linearizable prefix, the ops concurrent with it, and a <canvas> the script draws them on.
std::string explanations_html(const std::vector<ViolationRef>& violations);
// Per fault window: ok/s during it and after its heal, recovery time per op kind.
std::string liveness_html(const Liveness& l, const Timeline& t);

}  // namespace fencecheck::report
