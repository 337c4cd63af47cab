// Test support for the report tests: small run directories made by hand (a history built
// with HistoryBuilder, a config.json, and a results.json produced by the real checkers),
// reading files back, the JSON a report embeds, and the external tools the tests drive
// (xmllint, chromium) — missing ones fail the test in CI (env CI set) and skip it elsewhere.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "checkers/check.h"
#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

inline json test_config(const std::string& name = "redis-lock-append-pause-holder-unfenced") {
  return {{"name", name},          {"backend", "redis"}, {"workload", "lock-append"},
          {"nemesis", {"pause-holder"}}, {"resource", "unfenced"}, {"seed", 42},
          {"command", {"--backend", "redis", "--seed", "42", "--name", name}}};
}

// Runs every checker over dir's history.jsonl (and resource.jsonl) and writes results.json.
inline json judge(const fs::path& dir) {
  CheckRequest req;
  req.history = (dir / "history.jsonl").string();
  if (fs::exists(dir / "resource.jsonl")) req.resource = (dir / "resource.jsonl").string();
  json doc = run_checks(req).to_json(req);
  spit(dir / "results.json", doc.dump(2));
  return doc;
}

// The builder's history (and resource log) written, with a config.json; judged unless not.
inline fs::path make_run(const HistoryBuilder& h, bool judged = true, const json& config = test_config()) {
  fs::path dir = h.dir();
  h.history_path();
  h.resource_path();
  spit(dir / "config.json", config.dump(2));
  if (judged) judge(dir);
  return dir;
}

// The data document embedded in a report.
inline json embedded_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"fc-data\">";
  auto a = html.find(open);
  if (a == std::string::npos) return nullptr;
  a += open.size();
  auto b = html.find("</script>", a);
  return json::parse(html.substr(a, b - a));
}

inline std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// True when `tool` is on PATH; otherwise fails (CI) or the caller should skip.
inline bool have_tool(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

#define FC_REQUIRE_TOOL(tool, package)                                                              \
  do {                                                                                              \
    if (!::fencecheck::testing::have_tool(tool)) {                                                  \
      if (std::getenv("CI") != nullptr) FAIL() << tool " is not installed (scripts/setup.sh installs " package ")"; \
      GTEST_SKIP() << tool " is not installed (scripts/setup.sh installs " package ")";             \
    }                                                                                               \
  } while (0)

}  // namespace fencecheck::testing
