// The Workload role: what one client does, op after op, and which keys the final read
// covers. A workload sees its client only through ClientSession, so it never deals with
// workers, history lines or process numbers: the session records every invoke and
// completion, and after an `info` the session continues under a new process number.
//
// One Workload object serves a whole run: run_client runs on every client thread at once,
// and final_read_keys may be called from any thread at any time (the runner calls it once
// every run_client returned). What a client does depends only on its session's rng and on
// what its ops return, never on other clients' threads; the one thing a workload shares
// between them is the record of the resource keys used so far (lock-append's generations),
// kept with atomics. Neither call blocks except inside the session's own ops and sleeps.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/ops.h"

namespace fencecheck {

struct OpResult {
  OpType type = OpType::kInfo;  // kOk, kFail or kInfo
  nlohmann::json value;         // the completion's value
  std::string error;
};

// One client's connection to the test, implemented by the runner. Used by one thread.
class ClientSession {
 public:
  virtual ~ClientSession() = default;
  // Runs one op on this client's worker; the invoke and the completion enter the history.
  // fence: the token of the lock the client holds, shown to the resource with a read (the
  // history's read value stays null; the resource log records it).
  virtual OpResult invoke(OpFn f, const std::string& key, const nlohmann::json& value,
                          std::optional<std::int64_t> fence = std::nullopt) = 0;
  virtual bool running() const = 0;                        // false once the test is ending
  virtual void sleep(std::chrono::milliseconds d) = 0;     // returns early when ending
  virtual std::mt19937_64& rng() = 0;                      // seeded per client
  virtual std::uint64_t unique_element() = 0;              // unique in the whole run
  // True when the lock library told this client, since its last acquire of `lock`, that it
  // lost that lock (a `lost` notice): a careful client stops using the resource then.
  virtual bool lost(const std::string& lock) const {
    (void)lock;
    return false;
  }
};

// lock-append's default bound on the elements one resource key holds (the reasons are in
// workloads/lock_workloads.cpp, where the rotation is).
inline constexpr int kAppendsPerKey = 100;

struct WorkloadOptions {
  int keys = 1;
  std::chrono::milliseconds hold{100};
  // lock-append: a key holding this many elements is full; below 1, make() throws
  // std::invalid_argument.
  int appends_per_key = kAppendsPerKey;
  // The shortest hold: each hold is drawn from [hold_min, hold] (a fault budget's holder
  // that works through a whole cut holds for a fixed time: hold_min = hold).
  std::chrono::milliseconds hold_min{0};
};

class Workload {
 public:
  virtual ~Workload() = default;
  // One client's loop; returns once session.running() is false.
  virtual void run_client(ClientSession& session) const = 0;
  // Resource keys read once more after the run (and the heal); empty for none. Every key a
  // client used before the call is listed, so that a late write to any of them is judged.
  virtual std::vector<std::string> final_read_keys() const = 0;
};

struct WorkloadInfo {
  std::string name;
  std::string description;
  // The client ops it issues; the checkers that judge it follow from them
  // (checkers_for in checkers/registry.h).
  std::vector<OpFn> ops;
  std::function<std::unique_ptr<Workload>(const WorkloadOptions&)> make;
};

const std::vector<WorkloadInfo>& workload_registry();
const WorkloadInfo* find_workload(std::string_view name);  // nullptr when unknown
std::string workload_names();

// Lock i protects resource key i: "l0" ↔ "k0". lock-append rotates the key: lock i protects
// generation 0 "k<i>", then "k<i>.1", "k<i>.2" … (generation g >= 1 is "k<i>.<g>").
std::string lock_name(int i);
std::string resource_key(int i, int generation = 0);

}  // namespace fencecheck
