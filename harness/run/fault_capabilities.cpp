#include "harness/run/fault_capabilities.h"

namespace fencecheck {

void FixedClocks::set_offset(const std::string& node, std::chrono::milliseconds) {
  throw HarnessError("cannot shift the clock of node " + node +
                     ": this run has no clock-offset library");
}

}  // namespace fencecheck
