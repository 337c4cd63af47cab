// What the ssh tests share: the fixture's nodes file (ctest's ssh fixture makes it) and a
// look into each fixture host — its network namespace — for what a run left there.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
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

// Every fencecheck chain and jump on every fixture host, and every run directory: empty
// when no run left anything.
inline std::string what_runs_left_on_hosts() {
  std::string left;
  for (const auto& ns : fixture_namespaces()) {
    auto r = run_command("ip netns exec " + ns + " iptables -w -S | grep ' fc-' || true");
    if (!r.out.empty()) left += ns + ": " + r.out;
  }
  left += run_command("ls /var/tmp/fencecheck 2>/dev/null || true").out;
  // Processes started in a run directory (the fixture's hosts share this machine's pids).
  left += run_command("for p in /proc/[0-9]*; do case $(readlink $p/cwd 2>/dev/null) in "
                      "/var/tmp/fencecheck/*) echo \"process ${p#/proc/}\";; esac; done").out;
  return left;
}

}  // namespace fencecheck::testing
