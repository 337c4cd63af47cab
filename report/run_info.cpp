#include "report/run_info.h"

#include <fstream>
#include <sstream>

#include "checkers/input_file.h"
#include "platform/errors.h"

namespace fencecheck::report {

namespace fs = std::filesystem;

namespace {

std::string text_field(const nlohmann::json& j, const char* field, const std::string& file) {
  if (!j.contains(field) || j[field].is_null()) return "";
  if (!j[field].is_string()) throw InputError(file, 0, field, "must be a string, found " + j[field].dump());
  return j[field].get<std::string>();
}

std::vector<std::string> list_field(const nlohmann::json& j, const char* field, const std::string& file) {
  std::vector<std::string> out;
  if (!j.contains(field) || j[field].is_null()) return out;
  if (!j[field].is_array()) throw InputError(file, 0, field, "must be a list of strings, found " + j[field].dump());
  for (const auto& item : j[field]) {
    if (!item.is_string()) throw InputError(file, 0, field, "must be a list of strings, found " + item.dump());
    out.push_back(item.get<std::string>());
  }
  return out;
}

void read_config(RunInfo& info, const fs::path& file) {
  const nlohmann::json c = read_json_file(file);
  const std::string f = file.string();
  if (!c.is_object()) throw InputError(f, 1, "", "must be a JSON object");
  info.has_config = true;
  if (std::string name = text_field(c, "name", f); !name.empty()) info.name = name;
  info.backend = text_field(c, "backend", f);
  info.workload = text_field(c, "workload", f);
  info.resource = text_field(c, "resource", f);
  info.faults = list_field(c, "nemesis", f);
  info.command = list_field(c, "command", f);
  info.runtime = text_field(c, "runtime", f);
  if (c.contains("unavailable_faults") && !c["unavailable_faults"].is_null()) {
    const auto& u = c["unavailable_faults"];
    if (!u.is_object()) throw InputError(f, 0, "unavailable_faults", "must be an object, found " + u.dump());
    for (const auto& [fault, why] : u.items()) {
      if (!why.is_string()) throw InputError(f, 0, "unavailable_faults." + fault, "must be a string, found " + why.dump());
      info.unavailable_faults[fault] = why.get<std::string>();
    }
  }
  if (c.contains("seed") && !c["seed"].is_null()) {
    if (!c["seed"].is_number_unsigned()) throw InputError(f, 0, "seed", "must be a non-negative integer");
    info.seed = c["seed"].get<std::uint64_t>();
  }
}

// What the store's layout says: <store>/<test name>/<timestamp>/.
RunInfo info_from_path(const fs::path& dir) {
  RunInfo info;
  info.dir = dir;
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(dir), ec);  // `latest` names the run it points at
  if (ec) abs = fs::absolute(dir).lexically_normal();
  const fs::path leaf = abs.filename().empty() ? abs.parent_path() : abs;
  info.timestamp = leaf.filename().string();
  info.name = leaf.parent_path().filename().string();
  info.verdict = "unfinished";
  return info;
}

}  // namespace

nlohmann::json read_json_file(const fs::path& file) {
  std::unique_ptr<std::istream> in = open_input_stream(file.string());  // never waits on a FIFO
  std::stringstream buf;
  buf << in->rdbuf();
  const std::string text = buf.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t end = std::min<std::size_t>(e.byte, text.size());
    std::size_t line = 1;
    for (std::size_t i = 0; i + 1 < end; ++i) line += text[i] == '\n';
    throw InputError(file.string(), line, "", "not valid JSON");
  }
}

std::string verdict_of(const nlohmann::json& results, const std::string& file) {
  const nlohmann::json v = results.is_object() ? results.value("valid", nlohmann::json()) : nlohmann::json();
  if (v.is_boolean()) return v.get<bool>() ? "valid" : "invalid";
  if (v == "unknown") return "unknown";
  throw InputError(file, 0, "valid", "must be true, false or \"unknown\", found " + v.dump());
}

RunInfo read_run_info(const fs::path& dir, const std::optional<fs::path>& results) {
  RunInfo info = info_from_path(dir);
  std::error_code ec;
  if (fs::exists(dir / "config.json", ec)) read_config(info, dir / "config.json");
  const fs::path results_file = results.value_or(dir / "results.json");
  if (results || fs::exists(results_file, ec)) {
    nlohmann::json r = read_json_file(results_file);
    info.verdict = verdict_of(r, results_file.string());
    info.results = std::move(r);
  }
  return info;
}

RunSummary summarize_run(const fs::path& dir) {
  RunSummary s;
  s.info = info_from_path(dir);
  try {
    s.info = read_run_info(dir);
  } catch (const std::exception& e) {
    s.problem = e.what();
  }
  return s;
}

std::string display_time(const std::string& t) {
  // 20261201T220213.402Z
  if (t.size() < 16 || t[8] != 'T') return t;
  for (std::size_t i : {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14}) {
    if (t[i] < '0' || t[i] > '9') return t;
  }
  return t.substr(0, 4) + "-" + t.substr(4, 2) + "-" + t.substr(6, 2) + " " + t.substr(9, 2) + ":" +
         t.substr(11, 2) + ":" + t.substr(13, 2) + " UTC";
}

std::string faults_text(const RunInfo& info) {
  if (info.faults.empty()) return info.has_config ? "none" : "—";
  std::string s;
  for (const auto& f : info.faults) s += (s.empty() ? "" : ", ") + f;
  return s;
}

}  // namespace fencecheck::report
