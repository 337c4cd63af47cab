// The controller's handle on one worker process, over the worker's Unix socket.
//
// Every call has a deadline enforced on the controller's side by gRPC, so a worker that
// is frozen (SIGSTOP), dead or wedged never blocks a caller past its deadline.
// invoke() never throws: a missed deadline or a broken connection is an `info`
// completion (the op may have happened). setup() and wait_connected() throw HarnessError.
// Thread-safe: calls from different threads may overlap.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ops/ops.h"

namespace fencecheck {

// Which lock client a worker makes: fencecheck's own for the backend ("native"), or a lock
// library's adapter (adapters/registry.h), with what the adapter needs.
struct WorkerClientChoice {
  std::string name = "native";
  std::string adapter_log;  // the adapter's stderr
  std::chrono::milliseconds op_timeout{5000};
  std::chrono::milliseconds acquire_timeout{500};
  std::chrono::milliseconds ttl{1000};  // the run's lease
  std::map<std::string, std::string> options;  // the adapter's options (--client-opt), resolved
};

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

  using ClientChoice = WorkerClientChoice;
  // Makes the worker's lock client and resource stub. Throws HarnessError with the
  // worker's reason (unknown backend, malformed config, an adapter that did not start) or
  // if it does not answer in 20 s (an adapter's init may take 10). cancelled is asked every
  // 50 ms; when it says true the call is cancelled and Interrupted thrown.
  void setup(const std::string& backend, const nlohmann::json& client_config,
             const std::string& resource_address, const std::string& node,
             const ClientChoice& client = ClientChoice{}, const std::function<bool()>& cancelled = {});

  // What the worker's lock library said on its own (proto/worker.proto, Notice):
  //   f "lost":   the grant `lease` on `key` was lost, for `reason`;
  //   f "paused": the worker's acquire in flight on `key` (invoked with pause_after_send)
  //               stopped its library's thread for `ms` from about now: sent by the worker
  //               as soon as it read the adapter's event, before the thread blocked.
  struct Notice {
    std::string f, key, lease, reason;
    std::chrono::milliseconds ms{0};  // "paused": the pause; "renewed": the new validity
  };
  // Streams the worker's notices to on_notice, on a thread of this handle's, in the order
  // the worker queued them, until the worker stops or the handle is destroyed (which
  // cancels the stream and joins the thread: bounded). Call at most once. The stream is
  // not ordered with invoke()'s completions: a "paused" notice is queued by the worker
  // before its acquire's reply, but may reach on_notice after invoke() returned it (see
  // Completion::paused_after_send).
  void watch_notices(std::function<void(const Notice&)> on_notice);

  struct Completion {
    OpType type = OpType::kInfo;  // kOk, kFail or kInfo
    nlohmann::json ok_value;      // kOk: what an acquire or read returned (op_codec.h)
    std::string error;
    bool not_sent = false;        // kFail: nothing reached the service (unreachable)
    std::string lease;            // kOk acquire: the grant's owner id (Notice::lease)
    std::string broken;           // kInfo: the worker's own lock client broke (why)
    // An acquire invoked with pause_after_send, when the worker answered (any type): how long
    // its library stopped inside it, the ms of the "paused" notice the worker sent for it;
    // 0: it never stopped (nothing sent, failed first, no reply from the library), and no
    // such notice was sent. nullopt: no pause was asked, or the worker did not answer
    // (timeout, lost connection): whether it stopped is unknown, and its notice may come.
    std::optional<std::chrono::milliseconds> paused_after_send = std::nullopt;
  };
  // Runs op f on key; invoke_value is the history's invoke value (an op whose value has the
  // wrong shape completes kFail, never sent); ttl: an acquire's lease. Returns within
  // `deadline` (plus scheduling noise). A worker that breaks the protocol (a malformed
  // reply) gives kInfo: the op may have happened.
  // fence: the holder's token shown to the resource with a read (op_codec.h).
  // pause_after_send: an acquire's in-library pause (InvokeRequest.pause_after_send_ms).
  Completion invoke(OpFn f, const std::string& key, const nlohmann::json& invoke_value,
                    std::chrono::milliseconds ttl, std::chrono::milliseconds deadline,
                    std::optional<std::int64_t> fence = std::nullopt,
                    std::chrono::milliseconds pause_after_send = std::chrono::milliseconds(0));

  // Asks the worker to exit. True if it acknowledged within timeout; false otherwise (the
  // caller then stops the process through its Supervisor). Never throws.
  bool shutdown(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::string socket_path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck
