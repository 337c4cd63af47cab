// Test support: runs a shell command and captures its exit code and output (stdout and
// stderr together). For tests that drive the real `fencecheck` binary.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace fencecheck::testing {

struct CommandResult {
  int code = -1;  // exit code, or -1 if killed by a signal
  std::string out;
};

inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace fencecheck::testing
