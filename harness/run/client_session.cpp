#include "harness/run/client_session.h"

#include <thread>

namespace fencecheck {

OpResult WorkerSession::invoke(OpFn f, const std::string& key, const nlohmann::json& value) {
  shared_.history.record(process_, OpType::kInvoke, f, key, value, node_);
  WorkerHandle::Completion c =
      worker_.invoke(std::string(to_string(f)), key, value.dump(), shared_.ttl, shared_.op_timeout);
  OpResult r{c.type, nullptr, c.error};
  if (f == OpFn::kRelease || f == OpFn::kWrite || f == OpFn::kCas) {
    r.value = value;  // completions repeat the invoke's value (DESIGN.md)
  } else if (c.type == OpType::kOk) {
    r.value = nlohmann::json::parse(c.value_json, nullptr, /*allow_exceptions=*/false);
    if (r.value.is_discarded()) {
      r = OpResult{OpType::kInfo, nullptr, "worker returned malformed JSON: " + c.value_json};
    } else if (f == OpFn::kAcquire && !(r.value.is_object() && r.value.contains("token"))) {
      r = OpResult{OpType::kInfo, nullptr, "worker returned an acquire value without a token"};
    }
  }
  shared_.history.record(process_, r.type, f, key, r.value, node_, r.error);
  if (r.type == OpType::kInfo) process_ = shared_.next_process++;
  if (r.type == OpType::kOk && f == OpFn::kAcquire) shared_.on_acquired(node_);
  return r;
}

void WorkerSession::sleep(std::chrono::milliseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (running() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min(d, std::chrono::milliseconds(20)));
  }
}

}  // namespace fencecheck
