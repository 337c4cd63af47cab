// Builds history.jsonl / resource.jsonl text for tests, one event per call, with indices
// filled in; writes them to a temporary directory removed by the destructor. Times are in
// milliseconds for readability and written as nanoseconds.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/check.h"

namespace fencecheck::testing {

using nlohmann::json;

class HistoryBuilder {
 public:
  HistoryBuilder() {
    char tmpl[] = "/tmp/fc-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~HistoryBuilder() { std::filesystem::remove_all(dir_); }

  HistoryBuilder& op(std::int64_t process, const char* type, const char* f, const std::string& key,
                     json value, double t_ms, const std::string& node = "") {
    json j = {{"index", index_++}, {"time", static_cast<std::int64_t>(t_ms * 1e6)},
              {"process", process}, {"type", type}, {"f", f}, {"key", key}, {"value", value}};
    j["node"] = node.empty() ? this->node(process) : node;
    lines_.push_back(j.dump());
    return *this;
  }
  // An acquire of `key` invoked at t_inv and completed ok at t_ok with `token`.
  HistoryBuilder& acquire(std::int64_t p, const std::string& key, double t_inv, double t_ok,
                          json token = nullptr) {
    op(p, "invoke", "acquire", key, nullptr, t_inv, node(p));
    return op(p, "ok", "acquire", key, {{"token", token}}, t_ok, node(p));
  }
  HistoryBuilder& release(std::int64_t p, const std::string& key, double t_inv, double t_ok,
                          json token = nullptr) {
    op(p, "invoke", "release", key, {{"token", token}}, t_inv, node(p));
    return op(p, "ok", "release", key, {{"token", token}}, t_ok, node(p));
  }
  HistoryBuilder& write(std::int64_t p, const std::string& key, json list, const char* outcome,
                        double t_inv, double t_done, json token = nullptr) {
    json v = {{"token", token}, {"value", list}};
    op(p, "invoke", "write", key, v, t_inv, node(p));
    return op(p, outcome, "write", key, v, t_done, node(p));
  }
  HistoryBuilder& read(std::int64_t p, const std::string& key, json value, double t_inv, double t_ok) {
    op(p, "invoke", "read", key, nullptr, t_inv, node(p));
    return op(p, "ok", "read", key, value, t_ok, node(p));
  }
  // A `lost` notice: the lock library told process p it lost `key`.
  HistoryBuilder& lost(std::int64_t p, const std::string& key, double t_ms) {
    return op(p, "notice", "lost", key, nullptr, t_ms, node(p));
  }
  HistoryBuilder& nemesis(const char* f, double t_ms) {
    json j = {{"index", index_++}, {"time", static_cast<std::int64_t>(t_ms * 1e6)},
              {"process", "nemesis"}, {"type", "info"}, {"f", f}, {"value", {"c1"}}};
    lines_.push_back(j.dump());
    return *this;
  }
  HistoryBuilder& raw(const std::string& line) {
    lines_.push_back(line);
    ++index_;
    return *this;
  }
  HistoryBuilder& resource(const std::string& key, const char* op, json token, bool accepted,
                           json value = nullptr, const std::string& client = "c1") {
    json j = {{"seq", seq_}, {"time", seq_ * 1000}, {"key", key}, {"op", op}, {"token", token},
              {"value", value}, {"accepted", accepted}, {"reason", accepted ? "" : "stale token"},
              {"client", client}};
    ++seq_;
    resource_.push_back(j.dump());
    return *this;
  }

  // A cas line of resource.jsonl (op "cas" with its "expect").
  HistoryBuilder& resource_cas(const std::string& key, json expect, json value, bool accepted,
                               const std::string& client = "c1") {
    json j = {{"seq", seq_}, {"time", seq_ * 1000}, {"key", key}, {"op", "cas"}, {"token", nullptr},
              {"expect", expect}, {"value", value}, {"accepted", accepted},
              {"reason", accepted ? "" : "value mismatch"}, {"client", client}};
    ++seq_;
    resource_.push_back(j.dump());
    return *this;
  }

  std::string history_path(bool final_newline = true) const {
    std::string path = dir_ + "/history.jsonl";
    std::ofstream out(path, std::ios::trunc);
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      out << lines_[i];
      if (final_newline || i + 1 < lines_.size()) out << "\n";
    }
    return path;
  }
  std::string resource_path() const {
    std::string path = dir_ + "/resource.jsonl";
    std::ofstream out(path, std::ios::trunc);
    for (const auto& l : resource_) out << l << "\n";
    return path;
  }
  const std::string& dir() const { return dir_; }

  // Runs one checker (or all when name is empty) on what was built.
  CheckReport check(const std::string& name = "") const {
    CheckRequest req;
    req.history = history_path();
    if (!resource_.empty()) req.resource = resource_path();
    if (!name.empty()) req.checkers = {name};
    return run_checks(req);
  }
  CheckResult result(const std::string& name) const { return check(name).results.at(0).second; }

 private:
  static std::string node(std::int64_t p) { return "c" + std::to_string(p % 100); }
  std::string dir_;
  std::vector<std::string> lines_;
  std::vector<std::string> resource_;
  std::uint64_t index_ = 0;
  std::uint64_t seq_ = 0;
};

// One round of the lock-append workload as a real run records it, from t_ms on, 1 ms
// apart: acquire l0 (`token`), read k0 (→ `list`), write back `list` plus the element
// token × 10, release; with the resource's own read and write entries. `list` becomes the
// list written. release = false ends the round after its write, as a run killed there does.
inline void lock_append_round(HistoryBuilder& h, std::int64_t p, std::int64_t token, json& list, double t_ms,
                              bool release = true) {
  const std::string client = "c" + std::to_string(p % 100);
  h.acquire(p, "l0", t_ms, t_ms + 1, token).read(p, "k0", list, t_ms + 2, t_ms + 3);
  h.resource("k0", "read", token, true, list, client);
  list.push_back(token * 10);
  h.write(p, "k0", list, "ok", t_ms + 4, t_ms + 5, token).resource("k0", "write", token, true, list, client);
  if (release) h.release(p, "l0", t_ms + 6, t_ms + 7, token);
}

}  // namespace fencecheck::testing
