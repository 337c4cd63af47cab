#include "checkers/linear/models.h"

#include <unordered_map>
#include <unordered_set>

#include "checkers/bounded.h"

namespace fencecheck::linear {

std::string_view to_string(ModelKind m) {
  switch (m) {
    case ModelKind::kMutex: return MutexModel::kName;
    case ModelKind::kFencedMutex: return FencedMutexModel::kName;
    case ModelKind::kRegister: return RegisterModel::kName;
    case ModelKind::kCasRegister: return CasRegisterModel::kName;
  }
  return "?";
}

bool parse_model(std::string_view name, ModelKind& out) {
  for (ModelKind m : kAllModels) {
    if (name == to_string(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

bool model_applies(ModelKind m, OpKind k) {
  switch (m) {
    case ModelKind::kMutex: return MutexModel::applies(k);
    case ModelKind::kFencedMutex: return FencedMutexModel::applies(k);
    case ModelKind::kRegister: return RegisterModel::applies(k);
    case ModelKind::kCasRegister: return CasRegisterModel::applies(k);
  }
  return false;
}

std::string MutexModel::describe(const State& s, const Partition&) {
  if (s.holder == kLockFree) return "the lock is free";
  return "the lock is held by process " + std::to_string(s.holder);
}

std::string FencedMutexModel::describe(const State& s, const Partition& p) {
  std::string d = MutexModel::describe(MutexModel::State{s.holder}, p);
  if (s.max_token != kNoToken) d += " and the highest token granted is " + std::to_string(s.max_token);
  return d;
}

std::string RegisterModel::describe(const State& s, const Partition& p) {
  return "the register holds " + bounded_text(p.values[static_cast<std::size_t>(s.value)]);
}

namespace {

std::vector<bool> useful_lock_ops(const Partition& p) {
  std::vector<bool> keep(p.ops.size(), true);
  // Latest invoke time of any op per process that has an info acquire: such an acquire is
  // useless when nothing of its process follows it.
  std::unordered_map<std::int64_t, Nanos> last_call;
  for (const LinOp& op : p.ops) {
    if (op.info && op.kind == OpKind::kAcquire) last_call.try_emplace(op.process, op.call);
  }
  if (last_call.empty()) return keep;
  for (const LinOp& op : p.ops) {
    if (!op.is_lock_op()) continue;
    auto it = last_call.find(op.process);
    if (it != last_call.end() && it->second < op.call) it->second = op.call;
  }
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const LinOp& op = p.ops[i];
    if (op.info && op.kind == OpKind::kAcquire && last_call[op.process] == op.call) keep[i] = false;
  }
  return keep;
}

std::vector<bool> useful_register_ops(ModelKind m, const Partition& p) {
  std::unordered_set<std::int64_t> observed;  // values some read returns or some cas expects
  for (const LinOp& op : p.ops) {
    if (!model_applies(m, op.kind)) continue;
    if (op.kind == OpKind::kRead || op.kind == OpKind::kCas) observed.insert(op.arg);
  }
  std::vector<bool> keep(p.ops.size(), true);
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const LinOp& op = p.ops[i];
    if (!op.info || !model_applies(m, op.kind)) continue;
    std::int64_t written = op.kind == OpKind::kCas ? op.arg2 : op.arg;
    if (op.kind != OpKind::kRead && !observed.count(written)) keep[i] = false;
  }
  return keep;
}

}  // namespace

std::vector<bool> useful_ops(ModelKind m, const Partition& p) {
  if (m == ModelKind::kMutex || m == ModelKind::kFencedMutex) return useful_lock_ops(p);
  return useful_register_ops(m, p);
}

std::string describe_op(const LinOp& op, const Partition& p) {
  if (op.implied) {
    std::string d = "the release implied by the retirement of process " + std::to_string(op.process);
    if (op.arg != kNoToken) d += " (token " + std::to_string(op.arg) + ")";
    return d + " at the op of unknown outcome it invoked at " + format_seconds(op.call) + " (index " +
           std::to_string(op.invoke_index) + ")";
  }
  std::string d(to_string(op.kind));
  d += " by process " + std::to_string(op.process);
  auto value = [&](std::int64_t id) { return bounded_text(p.values.at(static_cast<std::size_t>(id))); };
  switch (op.kind) {
    case OpKind::kAcquire:
    case OpKind::kRelease:
      if (op.arg != kNoToken) d += " with token " + std::to_string(op.arg);
      break;
    case OpKind::kRead: d += " returning " + value(op.arg); break;
    case OpKind::kWrite: d += " of " + value(op.arg); break;
    case OpKind::kCas: d += " from " + value(op.arg) + " to " + value(op.arg2); break;
    case OpKind::kNemesis:
    case OpKind::kLost:
    case OpKind::kRenewed: break;  // never in a partition (notices are not ops of the lock)
  }
  d += " (invoked " + format_seconds(op.call);
  d += op.info ? ", outcome unknown" : ", ok " + format_seconds(op.ret);
  d += ", index " + std::to_string(op.invoke_index) + ")";
  return d;
}

}  // namespace fencecheck::linear
