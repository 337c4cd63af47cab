// The command line of harness_bench: its options, their defaults and checks, and --help.
// Pure: parse_options reads nothing but argv and /proc/self/exe (for the default
// --fencecheck); nothing blocks. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

namespace fencecheck::bench {

// A bad command line; what() is one line naming the option, e.g. "--seconds: 'x' is not …".
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::filesystem::path fencecheck;  // default: ../../harness/fencecheck from this program
  std::vector<int> clients{5, 20, 50};
  double seconds = 20;
  std::optional<std::uint64_t> requests;  // redis-benchmark -n; nullopt: calibrated
  std::filesystem::path json_file;        // empty: no JSON
  std::filesystem::path keep;             // empty: runs go to the temp dir and are removed
  bool help = false;
};

// The --help text.
extern const char* const kUsage;

// Options from argv ("--opt value" or "--opt=value"). Throws UsageError naming the option
// that is wrong: unknown, missing its value, or a value out of range.
Options parse_options(int argc, char** argv);

}  // namespace fencecheck::bench
