// The live progress line of `fencecheck run`: elapsed of limit, ok/fail/info counts and
// the faults in force. On a terminal it rewrites one line (at most 5 times a second);
// otherwise it prints a plain line every 5 seconds. Used by one thread.
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/run/history_recorder.h"

namespace fencecheck {

class Progress {
 public:
  Progress(std::ostream& out, double limit_s, const HistoryRecorder& history,
           std::function<std::vector<std::string>()> faults);
  void update();  // call often; prints when due
  void finish();  // ends the line on a terminal

 private:
  std::string line() const;
  std::ostream& out_;
  double limit_s_;
  const HistoryRecorder& history_;
  std::function<std::vector<std::string>()> faults_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
  std::size_t last_width_ = 0;
};

}  // namespace fencecheck
