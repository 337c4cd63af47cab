// The state file of one run: everything the run created that must not outlive it
// (namespaces, process groups, temp dirs). Written before each resource exists, atomically
// (write + rename), so that `fencecheck clean` can find and remove what a crashed run left.
//
// Files live in state_dir(): /run/fencecheck as root, $XDG_RUNTIME_DIR/fencecheck or
// /tmp/fencecheck-<uid> otherwise, one <run_id>.json per run:
//   {"version":1, "run_id":"3fa9c1", "controller":{"pid":P,"start_time":T},
//    "netns":[names], "process_groups":[{"pgid":G,"start_time":T}], "paths":[paths],
//    "docker":[dockerd sockets holding containers and networks labelled fencecheck.run=<id>]}
// Start times are field 22 of /proc/<pid>/stat, so a reused pid is never mistaken for ours.
//
// Thread-safe. Every mutator rewrites the file before returning and throws HarnessError
// (runtime.h) naming the file when it cannot — a failed write, fsync or close included —
// so a caller never creates a resource that is not recorded.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/atomic_file.h"

namespace fencecheck {

class RunState {
 public:
  // Creates the state file, recording this process as the controller. run_id must be
  // 6 lowercase hex digits (see new_run_id); throws HarnessError if it is not, or if a
  // state file for it exists already.
  explicit RunState(std::string run_id);
  // Removes whatever is still recorded (a safety net: normally the Supervisor and the
  // Runtime have removed their parts already), then the state file. Never throws.
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  const std::string& run_id() const { return run_id_; }
  const std::filesystem::path& file() const { return file_; }
  void add_netns(const std::string& name);
  void remove_netns(const std::string& name);
  // Records the group led by pgid with the leader's start time (call while it is alive).
  void add_process_group(int pgid);
  void remove_process_group(int pgid);
  void add_path(const std::filesystem::path& p);  // removed recursively by clean
  void remove_path(const std::filesystem::path& p);
  // A mount point of this run (a FUSE file system a server's data lives on): clean detaches
  // it (umount2 MNT_DETACH) after killing the processes, before removing paths.
  void add_mount(const std::filesystem::path& p);
  void remove_mount(const std::filesystem::path& p);
  // A dockerd that holds (or is about to hold) containers and networks of this run, all
  // labelled fencecheck.run=<run_id>: clean removes them by that label.
  void add_docker_daemon(const std::string& socket);
  void remove_docker_daemon(const std::string& socket);
  nlohmann::json snapshot() const;  // a copy of the document, for tests and diagnostics

  static std::filesystem::path state_dir();
  // A fresh run id: 6 lowercase hex digits from std::random_device, with no state file
  // and no namespace of that id. Safe in netns and interface names.
  static std::string new_run_id();
  static bool valid_run_id(const std::string& id);

 private:
  void save_locked(FileSync sync = FileSync::kDisk);
  std::string run_id_;
  std::filesystem::path file_;
  mutable std::mutex mu_;
  nlohmann::json doc_;
};

struct CleanReport {
  std::vector<std::string> removed;  // one line per thing removed
  std::vector<std::string> skipped;  // runs whose controller is still alive
  std::vector<std::string> errors;
};

// Removes what dead runs left (all runs, or only run_id when not empty): kills their
// recorded process groups, deletes their namespaces, removes their paths, then the state
// file (kept when something could not be removed, so that clean can be retried). A run
// whose controller is alive is skipped unless force; then the run's own teardown may
// remove things at the same time, and what is already gone is not an error. Also deletes
// namespaces named like ours (fc-<6 hex>-<node>) whose run has no state file: a run killed
// before writing it (as root only, since only root makes them), and, in the environment's
// dockerd when one answers, containers and networks labelled fencecheck.run=<id> whose run
// has no state file. Also removes temp files of state writes whose writer died.
CleanReport clean_runs(const std::string& run_id, bool force);

struct NodesFile;
// `fencecheck clean --nodes-file`: on every host of the file (in parallel), removes each run
// (only run_id, when not empty) that has no state file here any more — its controller is
// gone and the local clean is done. One line per removal or failure goes to report.
void clean_ssh_hosts(const NodesFile& hosts, const std::string& run_id, CleanReport& report);


}  // namespace fencecheck
