#include "platform/capabilities.h"

namespace fencecheck {

std::vector<Capability> Capabilities::list() const {
  std::vector<Capability> out;
  for (const CapabilityInfo& c : kCapabilityTable) {
    if (has(c.capability)) out.push_back(c.capability);
  }
  return out;
}

std::string Capabilities::names() const {
  std::string out;
  for (Capability c : list()) out += (out.empty() ? "" : ", ") + std::string(capability_info(c).name);
  return out.empty() ? "none" : out;
}

std::string_view reason_for(const std::vector<CapabilityReason>& reasons, Capability c) {
  for (const CapabilityReason& r : reasons) {
    if (r.capability == c) return r.why;
  }
  return {};
}

}  // namespace fencecheck
