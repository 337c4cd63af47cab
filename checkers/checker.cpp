#include "checkers/checker.h"

namespace fencecheck {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kValid: return "valid";
    case Verdict::kInvalid: return "invalid";
    case Verdict::kUnknown: return "unknown";
    case Verdict::kSkipped: return "skipped";
  }
  return "?";
}

nlohmann::json CheckResult::to_json() const {
  nlohmann::json j;
  switch (verdict) {
    case Verdict::kValid: j["valid"] = true; break;
    case Verdict::kInvalid: j["valid"] = false; break;
    default: j["valid"] = std::string(fencecheck::to_string(verdict)); break;
  }
  j["count"] = count;
  j["shown"] = violations.is_array() ? violations.size() : 0;
  j["violations"] = violations;
  j["summary"] = summary;
  if (!count_text.empty()) j["count_text"] = count_text;
  if (first_violation_at) j["first_violation_s"] = static_cast<double>(*first_violation_at) / 1e9;
  for (const auto& [k, v] : stats.items()) j[k] = v;
  return j;
}

}  // namespace fencecheck
