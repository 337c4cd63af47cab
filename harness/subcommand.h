// What every subcommand that runs a search or a suite does the same way: its exit code
// from its body, a flag it shares with `run` but sets itself refused by name. Header-only;
// call from the subcommand's CLI11 callback, on the main thread.
#pragma once

#include <functional>
#include <initializer_list>
#include <iostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "platform/errors.h"

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

}  // namespace fencecheck
