// The error vocabulary of fencecheck. Two kinds of failure stop a command, and both exit 3:
//
//   InputError    the user's input is bad: a file (history, resource log, config) has a
//                 malformed line or field. Its message is "<file>:<line>: field '<f>': what".
//   HarnessError  the test bench itself failed: a program is missing, a server would not
//                 start, a namespace could not be made, a file could not be written. The
//                 message says what failed and what to do.
//
// Interrupted is neither: a wait gave up because the user (Ctrl-C) or the run (its time
// limit, its final heal) asked it to. The caller decides what that means (exit 2 for an
// interrupted setup); it is never reported as a failure of the bench.
//
// Everything else a command finds is a verdict (valid / invalid / unknown), never an
// exception. Bad command-line options are reported by the CLI before anything runs.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace fencecheck {

class InputError : public std::runtime_error {
 public:
  // line 0: the file as a whole (it cannot be opened); field empty: the line as a whole.
  InputError(const std::string& file, std::size_t line, const std::string& field,
             const std::string& what);
  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  std::string file_;
  std::size_t line_;
  std::string field_;
};

class HarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The exit code for a failed command: 3, whichever of the two it was.
inline constexpr int kExitHarnessOrInput = 3;

}  // namespace fencecheck
