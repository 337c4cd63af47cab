// DaemonServer: the LockServer of every backend whose server is one daemon process per
// node (redis, the redlock masters, a ZooKeeper ensemble, etcd). A backend says how to
// configure a node, which process to run there and how to tell it is ready; this class
// does the rest of the role — start, stop, crash, pause, resume, logs — the same way for
// all of them.
//
// setup() spawns every node's daemon before it waits for any to be ready, because a quorum
// system (ZooKeeper, etcd) cannot answer on one node until a majority of them runs.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backends/lock_server.h"
#include "platform/errors.h"

namespace fencecheck {

class DaemonServer : public LockServer {
 public:
  DaemonServer(std::vector<std::string> nodes, std::chrono::milliseconds ready_timeout);

  void setup(Runtime& runtime, const std::filesystem::path& nodes_dir) override;
  const std::vector<std::string>& nodes() const override { return nodes_; }
  void start(const std::string& node) override;
  void launch(const std::string& node) override;
  Readiness await_ready(const std::string& node, const CancelCheck& give_up) override;
  void stop(const std::string& node) override;
  void kill(const std::string& node) override;
  void pause(const std::string& node) override;
  void resume(const std::string& node) override;
  bool running(const std::string& node) override;
  std::vector<Process*> processes(const std::string& node) override;
  std::vector<std::filesystem::path> log_files(const std::string& node) const override;
  void teardown() noexcept override;

 protected:
  // Called once per node by setup(), before any start: write config files into dir
  // (nodes_dir/<node>, created) and remember the node's address and port. Throws
  // HarnessError naming the file when it cannot write.
  virtual void configure(Runtime& runtime, const std::string& node,
                         const std::filesystem::path& dir) = 0;
  // The daemon to run on node (log, cwd and argv; env optional).
  virtual ProcessSpec daemon(const std::string& node) const = 0;
  // True once the node's daemon answers its protocol. Called from the controller's
  // thread; use Runtime::run_in to probe from inside the node's network.
  virtual bool ready(Runtime& runtime, const std::string& node) = 0;

  Runtime& runtime() const;
  // What configure() remembered for node in `per_node`; HarnessError naming the backend
  // when the node was never configured.
  template <class T>
  static const T& configured(const std::map<std::string, T>& per_node, const std::string& node,
                             const char* backend) {
    auto it = per_node.find(node);
    if (it == per_node.end()) throw HarnessError(std::string(backend) + ": node " + node + " is not configured");
    return it->second;
  }
  // start() for a quorum system (ZooKeeper, etcd): launches node and waits for it only when
  // the running nodes now make a majority. A member alone cannot answer, so after a crash
  // of all of them the start that completes a majority is the one that waits.
  void start_in_quorum(const std::string& node);
  // The nodes whose server runs and is not paused: the ones worth asking (leader()); a
  // paused one would only cost a probe's timeout.
  std::vector<std::string> answering_nodes();
  // await_ready() that must end kReady: throws HarnessError (timeout) or Interrupted
  // (the runtime's interrupt check) otherwise, quoting the log tail.
  void require_ready(const std::string& node);

 private:
  Process* current(const std::string& node) const;  // nullptr when stopped
  Process* take(const std::string& node);           // forgets it; nullptr when stopped
  std::vector<std::string> nodes_;
  std::chrono::milliseconds ready_timeout_;
  Runtime* runtime_ = nullptr;
  mutable std::mutex mu_;  // running_; never held while waiting for a server
  std::map<std::string, Process*> running_;
};

}  // namespace fencecheck
