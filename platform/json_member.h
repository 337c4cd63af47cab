// Reading documents written by other processes (results.json, budget.json, an adapter's
// lines), where any member may be missing: the member, or a JSON null. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

namespace fencecheck {

inline const nlohmann::json& json_member(const nlohmann::json& j, const char* name) {
  static const nlohmann::json kNull;
  return j.is_object() && j.contains(name) ? j[name] : kNull;
}

}  // namespace fencecheck
