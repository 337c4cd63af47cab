#include "checkers/history_validator.h"

namespace fencecheck {

void HistoryValidator::check(const Event& e) {
  auto fail = [&](const char* field, const std::string& what) {
    throw InputError(file_, e.line, field, what);
  };
  if (e.index != next_index_) {
    fail("index", "expected " + std::to_string(next_index_) + ", found " +
                      std::to_string(e.index) + " (indices must be 0, 1, 2 … in file order)");
  }
  ++next_index_;
  if (e.time < last_time_) {
    fail("time", "time goes backwards: " + std::to_string(e.time) + " ns after " +
                     std::to_string(last_time_) + " ns on the line before");
  }
  last_time_ = e.time;

  if (e.is_nemesis()) {
    if (e.type != OpType::kInfo) {
      fail("type", "nemesis events must have type \"info\", found \"" +
                       std::string(to_string(e.type)) + "\"");
    }
    return;
  }
  if (auto r = retired_.find(e.process); r != retired_.end()) {
    fail("process", "process " + std::to_string(e.process) + " was retired by an info on line " +
                        std::to_string(r->second) + " and may not appear again");
  }
  if (e.is_notice() != op_spec(e.f).notice) {
    fail("type", e.is_notice() ? "\"" + e.f_name + "\" is an op, not a notice: type notice is for " + notice_names()
                               : "\"" + e.f_name + "\" is a notice: its lines have type notice, not \"" +
                                     std::string(to_string(e.type)) + "\"");
  }
  // A notice may come at any time, an op of its process in flight or not.
  if (e.is_notice()) return;
  auto it = in_flight_.find(e.process);
  if (e.type == OpType::kInvoke) {
    if (it != in_flight_.end()) {
      fail("type", "process " + std::to_string(e.process) +
                       " invokes again while its op from line " + std::to_string(it->second.line) +
                       " is still in flight");
    }
    in_flight_.emplace(e.process, InFlight{e.f, e.key, e.line});
    return;
  }
  if (it == in_flight_.end()) {
    fail("type", "completion \"" + std::string(to_string(e.type)) + "\" of process " +
                     std::to_string(e.process) + " has no invoke in flight");
  }
  if (it->second.f != e.f) {
    fail("f", "completion f \"" + std::string(to_string(e.f)) + "\" does not match the invoke \"" +
                  std::string(to_string(it->second.f)) + "\" on line " +
                  std::to_string(it->second.line));
  }
  if (it->second.key != e.key) {
    fail("key", "completion key \"" + e.key + "\" does not match the invoke's \"" +
                    it->second.key + "\" on line " + std::to_string(it->second.line));
  }
  in_flight_.erase(it);
  if (e.type == OpType::kInfo) retired_.emplace(e.process, e.line);
}

}  // namespace fencecheck
