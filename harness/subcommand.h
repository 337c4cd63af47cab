// What every subcommand that runs a search or a suite does the same way: its exit code
// from its body, a flag it shares with `run` but sets itself refused by name, the command
// line that makes it again (repro.sh). Header-only; call from the subcommand's CLI11
// callback, on the main thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "platform/atomic_file.h"
#include "platform/errors.h"
#include "platform/ssh_remote.h"

namespace fencecheck {

// Runs body and ends the callback with its exit code (CLI::RuntimeError, which main()
// returns); an exception becomes one line "fencecheck NAME: what" on stderr and exit 3.
[[noreturn]] inline void finish_subcommand(const char* name, const std::function<int()>& body) {
  int code = 0;
  try {
    code = body();
  } catch (const std::exception& e) {
    std::cerr << "fencecheck " << name << ": " << e.what() << "\n";
    code = kExitHarnessOrInput;
  }
  throw CLI::RuntimeError(code);
}

// Throws std::invalid_argument "FLAG cannot be given to NAME: WHY" for the first of flags
// given on cmd.
inline void refuse_flags(const CLI::App& cmd, std::initializer_list<const char*> flags, const char* name,
                         const std::string& why) {
  for (const char* flag : flags) {
    if (cmd.get_option(flag)->count() > 0) {
      throw std::invalid_argument(std::string(flag) + " cannot be given to " + name + ": " + why);
    }
  }
}

// This process's arguments after the program's path, as given (/proc/self/cmdline).
inline std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> all;
  for (std::string arg; std::getline(in, arg, '\0');) all.push_back(arg);
  if (!all.empty()) all.erase(all.begin());
  return all;
}

// Writes dir/repro.sh, executable: `<this binary> ARGS`, each argument quoted, with
// `--seed SEED` added when ARGS have none, so that the same command runs the same seeds.
// Throws HarnessError when it cannot be written.
inline void write_command_repro(const std::filesystem::path& dir, std::vector<std::string> args, std::uint64_t seed) {
  if (std::find(args.begin(), args.end(), "--seed") == args.end()) args.insert(args.end(), {"--seed", std::to_string(seed)});
  std::error_code ec;
  std::string line = shell_quote(std::filesystem::read_symlink("/proc/self/exe", ec).string());
  for (const auto& a : args) line += " " + shell_quote(a);
  write_file_atomically(dir / "repro.sh", "#!/bin/sh\n# the same command, the same seeds\nexec " + line + " \"$@\"\n");
  std::filesystem::permissions(dir / "repro.sh", std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec |
                                                     std::filesystem::perms::others_exec,
                               std::filesystem::perm_options::add, ec);
}

}  // namespace fencecheck
