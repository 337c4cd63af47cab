// `fencecheck datasheet --all --jobs N`: one `fencecheck datasheet` child process per
// configuration, at most N at a time, each taking the next configuration as one finishes
// (a ZooKeeper sheet takes several times a Redis one, so fixed shards would idle).
//
// Each child leads its own process group and gets PR_SET_PDEATHSIG (SIGINT): a datasheet
// killed outright takes its sheets with it, and each of those ends its run as Ctrl-C
// would. A SIGINT/SIGTERM to the parent (a terminal's Ctrl-C reaches only it) is passed to
// every running child once, and no new one starts; the children keep what they measured. Not thread-safe: from the main thread (the death signal fires when the
// forking thread exits). Blocks until every child started has exited.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fencecheck {

struct SheetJob {
  std::string name;                // "redis (native)", for the progress lines
  std::vector<std::string> args;   // after `fencecheck`
  std::filesystem::path log;       // its output
};

// The exit codes of the jobs, in order (-1: killed by a signal; -2: never started, Ctrl-C
// came first). Throws HarnessError if a child cannot be forked, once the children already
// started have been stopped and have exited.
std::vector<int> run_sheet_jobs(const std::vector<SheetJob>& jobs, int parallel);

}  // namespace fencecheck
