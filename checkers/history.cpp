#include "checkers/history.h"

#include <cstdio>

namespace fencecheck {

std::string format_seconds(Nanos t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(t) / 1e9);
  return buf;
}

std::string describe_process(std::int64_t process, std::string_view node) {
  std::string s = "process " + std::to_string(process);
  if (!node.empty()) {
    s += " (";
    s += node;
    s += ")";
  }
  return s;
}

}  // namespace fencecheck
