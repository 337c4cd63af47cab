// The stylesheet and the script of report.html (report/assets/*.css, *.js), compiled into
// the library by embed_assets.cmake so that the report is one self-contained file. Neither
// contains "</script", "</style" or "<!--" (the build refuses them). Immutable.
#pragma once

#include <string_view>

namespace fencecheck::report {

extern const std::string_view kReportCss;
extern const std::string_view kReportJs;  // timeline.js, then report.js

}  // namespace fencecheck::report
