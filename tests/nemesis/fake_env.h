// FakeNemesisEnv: a NemesisEnv that sends no signals; it records every signal_node and
// record() call so tests can assert what a nemesis did, in order. Thread-safe, because
// the schedule calls it from its own thread while the test reads it.
#pragma once

#include <csignal>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "nemesis/nemesis.h"

namespace fencecheck::testing {

struct Signal {
  std::string node;
  int sig;
};

struct Recorded {
  std::string f;
  nlohmann::json value;
};

class FakeNemesisEnv : public NemesisEnv {
 public:
  FakeNemesisEnv(std::vector<std::string> clients, std::vector<std::string> servers)
      : clients_(std::move(clients)), servers_(std::move(servers)) {}

  std::vector<std::string> client_nodes() const override { return clients_; }
  std::vector<std::string> server_nodes() const override { return servers_; }
  void signal_node(const std::string& node, int sig) override {
    std::lock_guard lock(mu_);
    signals_.push_back({node, sig});
  }
  void record(const std::string& f, const nlohmann::json& value) override {
    std::lock_guard lock(mu_);
    records_.push_back({f, value});
  }

  std::vector<Signal> signals() const {
    std::lock_guard lock(mu_);
    return signals_;
  }
  std::vector<Recorded> records() const {
    std::lock_guard lock(mu_);
    return records_;
  }
  // Targets of the SIGSTOPs sent so far, in order.
  std::vector<std::string> stopped_nodes() const {
    std::vector<std::string> out;
    for (const auto& s : signals()) {
      if (s.sig == SIGSTOP) out.push_back(s.node);
    }
    return out;
  }
  // Per node: SIGSTOPs minus SIGCONTs; also false when a CONT ever came before its STOP.
  bool every_stop_resumed_in_order() const {
    std::map<std::string, int> depth;
    for (const auto& s : signals()) {
      depth[s.node] += s.sig == SIGSTOP ? 1 : s.sig == SIGCONT ? -1 : 0;
      if (depth[s.node] < 0 || depth[s.node] > 1) return false;
    }
    for (const auto& [node, d] : depth) {
      if (d != 0) return false;
    }
    return true;
  }

 private:
  std::vector<std::string> clients_, servers_;
  mutable std::mutex mu_;
  std::vector<Signal> signals_;
  std::vector<Recorded> records_;
};

}  // namespace fencecheck::testing
