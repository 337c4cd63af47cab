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
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/lock_server.h"
#include "platform/errors.h"
#include "platform/node_locks.h"

namespace fencecheck {

class DaemonServer : public LockServer {
 public:
  DaemonServer(std::vector<std::string> nodes, std::chrono::milliseconds ready_timeout);

  void setup(Runtime& runtime, const std::filesystem::path& nodes_dir) override;
  const std::vector<std::string>& nodes() const override { return nodes_; }
  void start(const std::string& node) override;
  void launch(const std::string& node) override;
  Readiness await_ready(const std::string& node, const Deadline& deadline) override;
  void stop(const std::string& node, const Deadline& deadline) override;
  void kill(const std::string& node, const Deadline& deadline) override;
  void pause(const std::string& node, const Deadline& deadline) override;
  void resume(const std::string& node, const Deadline& deadline) override;
  bool running(const std::string& node) override;
  std::vector<Process*> processes(const std::string& node) override;
  std::vector<std::filesystem::path> log_files(const std::string& node) const override;
  void teardown(const Deadline& deadline) noexcept override;

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
  // ready() of a daemon that one TCP port serves: false unless the port accepts a connection
  // within 200 ms, then what `probe` says, run inside node's network (Runtime::run_in) with
  // the address to reach the port from there. Blocks for the connect and the probe's own
  // deadline.
  static bool port_answers(Runtime& runtime, const std::string& node, const std::string& address, int port,
                           const std::function<bool(const HostPort&)>& probe);
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

  // Where a backend keeps what it can reuse from one run to the next instead of making it
  // again at every setup (PostgreSQL's freshly made cluster, the ZooKeeper servers' class
  // archive): <cache>/<name>, made 0700 if missing. <cache> is $FENCECHECK_CACHE when set
  // (set but empty, or "off": no cache), else /var/cache/fencecheck for root, else
  // $XDG_CACHE_HOME/fencecheck or ~/.cache/fencecheck. nullopt — the backend then makes
  // everything afresh, as without a cache — when the runtime's nodes do not run this
  // machine's programs on its files (only local and netns do), or when either directory
  // cannot be made or is not this user's alone (another owner, or writable by group or
  // others). Quick: a few mkdir and stat calls.
  static std::optional<std::filesystem::path> reuse_dir(const Runtime& runtime, const std::string& name);
  // 16 hex digits naming what a cached item was made from: the strings `parts`, and the
  // resolved path, size and modification time of each of `files` (a package upgrade changes
  // them, and with them the name). A missing file counts as such.
  static std::string fingerprint(const std::vector<std::string>& parts,
                                 const std::vector<std::filesystem::path>& files);
  // Where to make what becomes `final_path` (in a reuse_dir()) before renaming it into
  // place, so that nobody ever sees it half made: a sibling named
  // .new-<pid>-<n>-<final name>, unique to this call.
  static std::filesystem::path partial_path(const std::filesystem::path& final_path);
  // Keeps a copy of what a setup step just made on node (the directory `made`) as
  // kept/<made's name>, in a reuse_dir(), for later runs: copied beside `kept` (cp -a on the
  // node, ≤ 60 s), then renamed into place, so that no run sees it half made; when two runs
  // race, the first rename wins. A failure only costs later runs that step again: it is
  // noted in `log`, not thrown (Interrupted is).
  static void keep_for_later_runs(Runtime& runtime, const std::string& node, const std::filesystem::path& made,
                                  const std::filesystem::path& kept, const std::filesystem::path& log);
  // Appends "fencecheck: <line>" to a setup log (best effort: the log is for people).
  static void note_setup(const std::filesystem::path& log, const std::string& line);
  // setup() starts the nodes one after another, each ready before the next is launched (a
  // Galera cluster, whose joiners need a founder that runs), instead of all before waiting.
  void start_one_after_another() { one_after_another_ = true; }

 private:
  Process* current(const std::string& node) const;  // nullptr when stopped (or starting)
  Process* take(const std::string& node);           // forgets it; nullptr when stopped
  std::vector<std::string> nodes_;
  std::chrono::milliseconds ready_timeout_;
  bool one_after_another_ = false;
  Runtime* runtime_ = nullptr;
  mutable std::mutex mu_;  // running_, starting_; never held while spawning or waiting
  std::map<std::string, Process*> running_;
  SpawnOutsideLock starting_;  // launched, spawn not yet returned: a second launch is a no-op
};

}  // namespace fencecheck
