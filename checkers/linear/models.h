// The sequential specifications a partition is checked against (docs/checkers.md,
// "linearizable"), each a small stateless class in the style of Porcupine:
//
//   State init();                                  the state before any op
//   bool step(const State&, const LinOp&, State&); may the op take effect now? next state
//   uint64_t hash(const State&);  State::operator==
//   bool applies(OpKind);                          which ops belong to the model
//   bool is_pure(const LinOp&);   the op never changes the state when step() allows it
//   std::string describe(const State&, const Partition&);  for explanations
//
// step() is inline because the search calls it in its innermost loop. Models are pure
// functions of their arguments and safe to use from any number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/linear/lin_op.h"

namespace fencecheck::linear {

enum class ModelKind { kMutex, kFencedMutex, kRegister, kCasRegister };
// Every model, in the order help and messages list them.
inline constexpr ModelKind kAllModels[] = {ModelKind::kMutex, ModelKind::kFencedMutex, ModelKind::kRegister,
                                           ModelKind::kCasRegister};

inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline constexpr std::int64_t kLockFree = -1;  // processes are >= 0

// Not re-entrant: an acquire needs the lock free, even for its holder. A release needs
// the caller to hold it; since an `info` retires its process, a lock taken by an info
// acquire can never be released again.
struct MutexModel {
  struct State {
    std::int64_t holder = kLockFree;
    bool operator==(const State&) const = default;
  };
  static constexpr std::string_view kName = "mutex";
  static State init() { return {}; }
  static bool applies(OpKind k) { return k == OpKind::kAcquire || k == OpKind::kRelease; }
  static bool is_pure(const LinOp&) { return false; }
  static bool step(const State& s, const LinOp& op, State& out) {
    if (op.kind == OpKind::kAcquire) {
      if (s.holder != kLockFree) return false;
      out.holder = op.process;
      return true;
    }
    if (s.holder != op.process) return false;
    out.holder = kLockFree;
    return true;
  }
  static std::uint64_t hash(const State& s) { return mix64(static_cast<std::uint64_t>(s.holder)); }
  static std::string describe(const State& s, const Partition& p);
};

// A mutex whose every acquire with a known token gets a token greater than every token
// granted before it. An acquire whose token is unknown (info, or null) constrains nothing.
struct FencedMutexModel {
  struct State {
    std::int64_t holder = kLockFree;
    std::int64_t max_token = kNoToken;
    bool operator==(const State&) const = default;
  };
  static constexpr std::string_view kName = "fenced-mutex";
  static State init() { return {}; }
  static bool applies(OpKind k) { return MutexModel::applies(k); }
  static bool is_pure(const LinOp&) { return false; }
  static bool step(const State& s, const LinOp& op, State& out) {
    if (op.kind == OpKind::kAcquire) {
      if (s.holder != kLockFree) return false;
      if (op.arg != kNoToken && op.arg <= s.max_token) return false;
      out.holder = op.process;
      out.max_token = op.arg != kNoToken ? op.arg : s.max_token;
      return true;
    }
    if (s.holder != op.process) return false;
    out.holder = kLockFree;
    out.max_token = s.max_token;
    return true;
  }
  static std::uint64_t hash(const State& s) {
    return mix64(static_cast<std::uint64_t>(s.holder) ^
                 mix64(static_cast<std::uint64_t>(s.max_token)));
  }
  static std::string describe(const State& s, const Partition& p);
};

// read/write register; a never-written register reads null. `cas` ops are not its ops.
struct RegisterModel {
  struct State {
    std::int64_t value = kNullValue;
    bool operator==(const State&) const = default;
  };
  static constexpr std::string_view kName = "register";
  static State init() { return {}; }
  static bool applies(OpKind k) { return k == OpKind::kRead || k == OpKind::kWrite; }
  static bool is_pure(const LinOp& op) { return op.kind == OpKind::kRead; }
  static bool step(const State& s, const LinOp& op, State& out) {
    if (op.kind == OpKind::kRead) {
      out = s;
      return op.arg == s.value;
    }
    out.value = op.arg;
    return true;
  }
  static std::uint64_t hash(const State& s) { return mix64(static_cast<std::uint64_t>(s.value)); }
  static std::string describe(const State& s, const Partition& p);
};

// read/write/cas register: cas {"expect": X, "value": Y} succeeds iff the value is X.
struct CasRegisterModel {
  using State = RegisterModel::State;
  static constexpr std::string_view kName = "cas-register";
  static State init() { return {}; }
  static bool applies(OpKind k) { return k == OpKind::kCas || RegisterModel::applies(k); }
  static bool is_pure(const LinOp& op) { return op.kind == OpKind::kRead; }
  static bool step(const State& s, const LinOp& op, State& out) {
    if (op.kind != OpKind::kCas) return RegisterModel::step(s, op, out);
    if (s.value != op.arg) return false;
    out.value = op.arg2;
    return true;
  }
  static std::uint64_t hash(const State& s) { return RegisterModel::hash(s); }
  static std::string describe(const State& s, const Partition& p) {
    return RegisterModel::describe(s, p);
  }
};

std::string_view to_string(ModelKind m);
// nullopt-like: returns false for an unknown name.
bool parse_model(std::string_view name, ModelKind& out);
bool model_applies(ModelKind m, OpKind k);

// Info ops that the model can prove useless, which the search may leave out without
// changing the verdict (it only shrinks the search). Returns keep[i] for p.ops[i]:
//  - mutex models: an info acquire whose process has no later op on this key: if it took
//    effect, the lock stayed with a retired process forever, so nothing after it could
//    take effect either; leaving it out loses no linearization.
//  - register models: an info write or cas whose new value no read returns and no cas
//    expects: once it took effect only a later write could follow it.
std::vector<bool> useful_ops(ModelKind m, const Partition& p);

// "acquire by process 3 with token 7 (invoked 1.204 s, ok 1.300 s, index 57)"
std::string describe_op(const LinOp& op, const Partition& p);

}  // namespace fencecheck::linear
