// The LockServer role: the servers of one backend, started on the run's server nodes.
//
// start() writes each server's config into nodes_dir/<node>/, starts the server under the
// Supervisor with its log in nodes_dir/<node>/<program>.log, and returns once every server
// accepts connections and answers its protocol. On failure it throws HarnessError quoting
// the log tail. The processes are owned by the Supervisor; this object keeps references
// for the nemesis (pauses, crashes) and must not outlive the Supervisor.
// Not thread-safe: the runner calls start/stop from one thread.
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/runtime.h"
#include "platform/supervisor.h"

namespace fencecheck {

class LockServer {
 public:
  virtual ~LockServer() = default;
  virtual void start(Runtime& runtime, Supervisor& supervisor,
                     const std::filesystem::path& nodes_dir) = 0;
  // What every LockClient of this backend needs to reach the servers (after start()).
  virtual nlohmann::json client_config() const = 0;
  // The server processes, for pause-server and crashes. Empty before start().
  virtual std::vector<Process*> processes() = 0;
  // Stops every server. Idempotent.
  virtual void stop() = 0;
};

}  // namespace fencecheck
