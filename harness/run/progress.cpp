#include "harness/run/progress.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace fencecheck {

Progress::Progress(std::ostream& out, double limit_s, const HistoryRecorder& history,
                   std::function<std::vector<std::string>()> faults)
    : out_(out),
      limit_s_(limit_s),
      history_(history),
      faults_(std::move(faults)),
      tty_(&out == &std::cout && ::isatty(STDOUT_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

std::string Progress::line() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char buf[160];
  std::snprintf(buf, sizeof buf, "[%5.1f/%.0f s] ok %llu  fail %llu  info %llu", elapsed, limit_s_,
                static_cast<unsigned long long>(history_.ok()),
                static_cast<unsigned long long>(history_.failed()),
                static_cast<unsigned long long>(history_.unknown()));
  std::string s = buf;
  std::vector<std::string> active = faults_();
  s += "  faults: ";
  if (active.empty()) s += "none";
  for (std::size_t i = 0; i < active.size(); ++i) s += (i ? ", " : "") + active[i];
  return s;
}

void Progress::update() {
  auto now = std::chrono::steady_clock::now();
  auto every = tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
  if (now - last_ < every) return;
  last_ = now;
  std::string s = line();
  if (tty_) {
    std::string padded = s;
    if (padded.size() < last_width_) padded.append(last_width_ - padded.size(), ' ');
    last_width_ = s.size();
    out_ << "\r" << padded << std::flush;
  } else {
    out_ << s << "\n" << std::flush;
  }
}

void Progress::finish() {
  if (tty_) out_ << "\r" << line() << "\n";
  else out_ << line() << "\n";
  out_ << std::flush;
}

}  // namespace fencecheck
