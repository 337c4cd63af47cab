// The controller's handle on one worker process, over the worker's Unix socket.
//
// Every call has a deadline enforced on the controller's side by gRPC, so a worker that
// is frozen (SIGSTOP), dead or wedged never blocks a caller past its deadline.
// invoke() never throws: a missed deadline or a broken connection is an `info`
// completion (the op may have happened). setup() and wait_connected() throw HarnessError.
// Thread-safe: calls from different threads may overlap.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ops/ops.h"

namespace fencecheck {

class WorkerHandle {
 public:
  explicit WorkerHandle(std::string socket_path);
  ~WorkerHandle();
  WorkerHandle(const WorkerHandle&) = delete;
  WorkerHandle& operator=(const WorkerHandle&) = delete;

  const std::string& socket_path() const { return socket_path_; }

  // Waits until the worker accepts connections on its socket.
  void wait_connected(std::chrono::milliseconds timeout);
  // True once the worker accepts a connection; false after timeout. Never throws.
  bool connects_within(std::chrono::milliseconds timeout);

  // Makes the worker's lock client and resource stub. Throws HarnessError with the
  // worker's reason (unknown backend, malformed config) or if it does not answer in 10 s.
  void setup(const std::string& backend, const nlohmann::json& client_config,
             const std::string& resource_address, const std::string& node);

  struct Completion {
    OpType type = OpType::kInfo;  // kOk, kFail or kInfo
    nlohmann::json ok_value;      // kOk: what an acquire or read returned (op_codec.h)
    std::string error;
    bool not_sent = false;        // kFail: nothing reached the service (unreachable)
  };
  // Runs op f on key; invoke_value is the history's invoke value (an op whose value has the
  // wrong shape completes kFail, never sent); ttl: an acquire's lease. Returns within
  // `deadline` (plus scheduling noise). A worker that breaks the protocol (a malformed
  // reply) gives kInfo: the op may have happened.
  // fence: the holder's token shown to the resource with a read (op_codec.h).
  Completion invoke(OpFn f, const std::string& key, const nlohmann::json& invoke_value,
                    std::chrono::milliseconds ttl, std::chrono::milliseconds deadline,
                    std::optional<std::int64_t> fence = std::nullopt);

  // Asks the worker to exit. True if it acknowledged within timeout; false otherwise (the
  // caller then stops the process through its Supervisor). Never throws.
  bool shutdown(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::string socket_path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck
