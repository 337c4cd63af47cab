// The worker process's gRPC server (proto/worker.proto) on a Unix socket, its op socket, and the
// `fencecheck worker` subcommand that runs it.
//
// The socket is created with mode 0600 (only the controller's user may drive the worker);
// a stale socket file at the path is replaced, and the file is removed when the server
// stops. Ops arrive on the op socket beside it (op_listener.h), a thread per connection,
// so a new op is served even while an older one is still stuck. request_stop() is
// thread-safe; the Shutdown RPC calls it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include <CLI/CLI.hpp>

namespace fencecheck {

class WorkerServer {
 public:
  // Binds socket_path. Throws HarnessError if it cannot (path too long, directory missing…).
  WorkerServer(const std::string& socket_path, const std::string& node,
               std::chrono::milliseconds resource_deadline = std::chrono::seconds(2));
  ~WorkerServer();
  WorkerServer(const WorkerServer&) = delete;
  WorkerServer& operator=(const WorkerServer&) = delete;

  // Serves until request_stop() (or the Shutdown RPC), then shuts the server down, waiting
  // up to a second for calls in flight, and returns.
  void run();
  void request_stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Registers `worker`: --socket PATH, --node NAME. Its callback serves until Shutdown,
// SIGTERM or SIGINT, then returns (exit 0); errors throw HarnessError.
void add_worker_command(CLI::App& app);

}  // namespace fencecheck
