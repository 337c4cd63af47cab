#include "harness/run/fault_capabilities.h"

namespace fencecheck {

void FixedClocks::set_offset(const std::string& node, std::chrono::milliseconds) {
  throw HarnessError("cannot shift the clock of node " + node +
                     ": libfcclock.so is not beside the fencecheck binary (rebuild it)");
}

}  // namespace fencecheck
