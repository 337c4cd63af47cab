// README's "What each runtime can inject" table against the registries: each cell follows
// from what the runtime offers and what each fault needs (harness/run/capability_check.h).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/run/capability_check.h"
#include "nemesis/fault_registry.h"
#include "platform/runtime_registry.h"

namespace fencecheck::testing {
namespace {

std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream in(row);
  std::string cell;
  std::getline(in, cell, '|');  // before the first bar
  while (std::getline(in, cell, '|')) {
    const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  if (!cells.empty() && cells.back().empty()) cells.pop_back();
  return cells;
}

// The README table's rows after its header, as cells; the header first.
std::vector<std::vector<std::string>> readme_table() {
  std::ifstream readme(std::string(FENCECHECK_SOURCE_DIR) + "/README.md");
  std::vector<std::vector<std::string>> rows;
  bool in_section = false;
  for (std::string line; std::getline(readme, line);) {
    if (line == "What each runtime can inject:") in_section = true;
    if (!in_section) continue;
    if (line.rfind("|", 0) == 0) {
      if (line.rfind("|---", 0) != 0) rows.push_back(cells_of(line));
    } else if (!rows.empty()) {
      break;
    }
  }
  return rows;
}

struct Column {
  std::string header;
  std::function<bool(const FaultInfo&)> holds;
};

TEST(RuntimeTable, ReadmeSaysWhatTheRegistriesSay) {
  const std::vector<Column> columns = {
      {"partitions", [](const FaultInfo& f) { return f.family == "partition"; }},
      {"`freeze-*`", [](const FaultInfo& f) { return f.name.rfind("freeze-", 0) == 0; }},
      {"pauses, kills, restarts",
       [](const FaultInfo& f) {
         return (f.family == "pause" || f.family == "crash") && f.name.rfind("freeze-", 0) != 0;
       }},
      {"clock faults", [](const FaultInfo& f) { return f.family == "clock"; }},
  };
  const auto rows = readme_table();
  ASSERT_EQ(rows.size(), runtime_registry().size() + 1) << "one row per runtime, after the header";
  ASSERT_EQ(rows[0].size(), columns.size() + 2);
  for (std::size_t c = 0; c < columns.size(); ++c) ASSERT_EQ(rows[0][c + 1], columns[c].header);
  ASSERT_EQ(rows[0].back(), "`--client` adapters");
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const RuntimeInfo* rt = find_runtime(rows[r][0]);
    ASSERT_NE(rt, nullptr) << rows[r][0];
    ASSERT_EQ(rows[r].size(), rows[0].size()) << rt->name;
    const auto unavailable = faults_unavailable_under(*rt, false);
    const auto unaimed = faults_unavailable_under(*rt, true);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      std::vector<std::string> all, can, aimed;
      for (const FaultInfo& f : fault_registry()) {
        if (!columns[c].holds(f)) continue;
        all.push_back(f.name);
        if (!unavailable.contains(f.name)) can.push_back(f.name);
        if (!unaimed.contains(f.name)) aimed.push_back(f.name);
      }
      const std::string& cell = rows[r][c + 1];
      SCOPED_TRACE(rt->name + ", " + columns[c].header + ": \"" + cell + "\"");
      if (can == all) {
        EXPECT_EQ(cell.rfind("yes", 0), 0u);
      } else if (can.empty() && aimed.empty()) {
        EXPECT_EQ(cell, "no");
      } else {  // some: "clients only", or the ones it can, each named
        EXPECT_TRUE(cell != "no" && cell.rfind("yes", 0) != 0);
        for (const auto& f : can.empty() ? aimed : can) {
          EXPECT_TRUE(cell == "clients only" || cell.find("`" + f + "`") != std::string::npos) << f;
        }
      }
    }
    EXPECT_EQ(rows[r].back(), rt->offers.has(Capability::kRunsAdapters) ? "yes" : "no") << rt->name;
  }
}

}  // namespace
}  // namespace fencecheck::testing
