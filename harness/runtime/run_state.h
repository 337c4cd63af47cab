// The state file of one run: everything the run created that must not outlive it
// (namespaces, process groups, temp dirs). Written before each resource exists, atomically
// (write + rename), so that `fencecheck clean` can find and remove what a crashed run left.
//
// Files live in state_dir(): /run/fencecheck as root, $XDG_RUNTIME_DIR/fencecheck or
// /tmp/fencecheck-<uid> otherwise, one <run_id>.json per run. Thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

class RunState {
 public:
  // Creates the state file, recording this process as the controller.
  explicit RunState(std::string run_id);
  // Removes the state file (the run cleaned up after itself).
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  const std::string& run_id() const { return run_id_; }
  void add_netns(const std::string& name);
  void remove_netns(const std::string& name);
  void add_process_group(int pgid);
  void remove_process_group(int pgid);
  void add_path(const std::filesystem::path& p);  // removed recursively by clean
  void remove_path(const std::filesystem::path& p);

  static std::filesystem::path state_dir();
  // A fresh run id: short, unique among live runs, safe in netns and interface names.
  static std::string new_run_id();

 private:
  void save_locked();
  std::string run_id_;
  std::filesystem::path file_;
  std::mutex mu_;
  nlohmann::json doc_;
};

struct CleanReport {
  std::vector<std::string> removed;  // one line per thing removed
  std::vector<std::string> skipped;  // runs whose controller is still alive
  std::vector<std::string> errors;
};

// Removes what dead runs left (all runs, or only run_id when not empty). A run whose
// controller is alive is skipped unless force.
CleanReport clean_runs(const std::string& run_id, bool force);

}  // namespace fencecheck
