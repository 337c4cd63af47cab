// What the ssh tests share: the fixture's nodes file (ctest's ssh fixture makes it) and a
// look into each fixture host — its network namespace — for what a run left there.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/command.h"

namespace fencecheck::testing {

inline std::string fixture_nodes_file() {
  const char* f = std::getenv("FENCECHECK_TEST_NODES_FILE");
  return f == nullptr ? "" : f;
}

#define FC_REQUIRE_SSH_FIXTURE()                                                                \
  do {                                                                                          \
    if (fixture_nodes_file().empty() || !std::filesystem::exists(fixture_nodes_file())) {       \
      if (std::getenv("CI") != nullptr) FAIL() << "the ssh fixture is missing (ctest makes it)"; \
      GTEST_SKIP() << "no ssh fixture: run through ctest (scripts/ssh-test-hosts.sh)";           \
    }                                                                                           \
  } while (0)

// The fixture hosts' network namespaces, from their proxy commands.
inline std::vector<std::string> fixture_namespaces() {
  std::vector<std::string> out;
  std::ifstream in(fixture_nodes_file());
  static const std::regex ns("ip netns exec (\\S+) nc");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, ns)) out.push_back(m[1]);
  }
  return out;
}

// Whether run `id`'s controller still runs: its state file (/run/fencecheck/<id>.json)
// names a live pid. Such a run has left nothing yet, whoever started it.
inline bool run_is_live(const std::string& id) {
  std::ifstream in("/run/fencecheck/" + id + ".json");
  std::stringstream text;
  text << in.rdbuf();
  static const std::regex pid_field(R"re("controller"\s*:\s*\{[^}]*"pid"\s*:\s*([0-9]+))re");
  std::smatch m;
  const std::string doc = text.str();
  if (!std::regex_search(doc, m, pid_field)) return false;
  const int pid = std::stoi(m[1]);
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Every fencecheck chain and jump on every fixture host, every run directory and every
// process started in one: empty when no run left anything. The hosts share this machine's
// /var/tmp/fencecheck and its pids with every other ssh run here (another fixture's, a
// person's), so this looks at run `run_id` alone when given, and otherwise at every run but
// those still going (run_is_live): a concurrent run is not a leftover.
inline std::string what_runs_left_on_hosts(const std::string& run_id = "") {
  static const std::regex id_in(R"(fc-([0-9a-f]{6})|/var/tmp/fencecheck/([0-9a-f]{6}))");
  auto counts = [&](const std::string& text) {
    std::smatch m;
    if (!std::regex_search(text, m, id_in)) return true;  // not a run's: always reported
    const std::string id = m[1].matched ? m[1].str() : m[2].str();
    return run_id.empty() ? !run_is_live(id) : id == run_id;
  };
  std::string left;
  for (const auto& ns : fixture_namespaces()) {
    std::istringstream rules(run_command("ip netns exec " + ns + " iptables -w -S | grep ' fc-' || true").out);
    for (std::string rule; std::getline(rules, rule);) {
      if (counts(rule)) left += ns + ": " + rule + "\n";
    }
  }
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator("/var/tmp/fencecheck", ec)) {
    if (counts(dir.path().string())) left += dir.path().string() + "\n";
  }
  // Processes started in a run directory (the fixture's hosts share this machine's pids).
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
    std::error_code link_ec;
    const std::string cwd = std::filesystem::read_symlink(proc.path() / "cwd", link_ec).string();
    if (link_ec || cwd.rfind("/var/tmp/fencecheck/", 0) != 0) continue;
    if (counts(cwd)) left += "process " + proc.path().filename().string() + " in " + cwd + "\n";
  }
  return left;
}

}  // namespace fencecheck::testing
