// `fencecheck preflight --nodes-file FILE`: checks every host of an ssh runtime's nodes file
// before a run needs it — ssh login without a prompt, root, iptables, the servers' programs
// of every backend, and clock skew against the controller — and prints one line per host:
// "ok" or each failure as one sentence. Exit 0 when every host passed, 1 when one failed,
// 3 for a bad nodes file. Hosts are checked in parallel; each takes at most ~30 s.
#pragma once

#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

namespace fencecheck {

void add_preflight_command(CLI::App& app);
int run_preflight(const std::string& nodes_file, std::ostream& out, std::ostream& err);

}  // namespace fencecheck
