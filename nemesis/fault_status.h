// FaultStatus: what one fault family shows as in force ("pause-server n2"), readable from
// any thread while the family acts. The runner's progress line and bench health read it
// every 50 ms, so it must never wait for a fault action: a family holds its own lock
// across its actions (a SIGSTOP until stopped, an iptables change) and updates this after
// each change. Thread-safe; no method blocks beyond a copy of a few strings.
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace fencecheck {

class FaultStatus {
 public:
  // armed: the lines name a fault waiting for its moment (a pause-holder waiting for an
  // acquire), which has done nothing yet.
  void show(std::vector<std::string> lines, bool armed = false) {
    std::lock_guard lock(mu_);
    lines_ = std::move(lines);
    armed_ = armed;
  }
  void clear() { show({}); }
  std::vector<std::string> shown() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  bool any() const {
    std::lock_guard lock(mu_);
    return !lines_.empty();
  }
  // Something shown that has acted (not merely armed).
  bool acting() const {
    std::lock_guard lock(mu_);
    return !lines_.empty() && !armed_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
  bool armed_ = false;
};

}  // namespace fencecheck
